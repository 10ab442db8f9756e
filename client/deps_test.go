package client

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/daemon":         "clients never link the daemon",
		"github.com/quasim/quasim/internal/store": "clients reach the store only through the daemon",
		"go.etcd.io/bbolt":                        "the client must stay light",
		"github.com/rs/zerolog":                   "the client never logs",
		"testing":                                 "no test code in production binaries",
	})
}
