package pipeline

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/internal/store": "the daemon stores experiments; this package runs them",
		"github.com/quasim/quasim/daemon":         "the daemon wires this package, not the other way",
		"go.etcd.io/bbolt":                        "no storage here",
		"net/http":                                "no API here",
		"testing":                                 "no test code in production",
	})
}
