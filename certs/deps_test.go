package certs

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"go.etcd.io/bbolt":                        "certs is a format: storage is internal/store's",
		"github.com/quasim/quasim/internal/store": "the store depends on certs, not the reverse",
		"github.com/quasim/quasim/daemon":         "the daemon depends on certs, not the reverse",
		"net/http":                                "certificates verify offline; serving them is the daemon's",
		"testing":                                 "no test code in production",
	})
}
