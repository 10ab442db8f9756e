package memplan

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/daemon":         "quasimctl plans offline with memplan",
		"github.com/quasim/quasim/internal/store": "quasimctl plans offline with memplan",
		"go.etcd.io/bbolt":                        "quasimctl plans offline with memplan",
		"net":                                     "memplan does no I/O",
		"testing":                                 "no test code in production",
	})
}
