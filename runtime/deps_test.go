package runtime

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/daemon":         "runtimes never link the daemon",
		"github.com/quasim/quasim/internal/store": "runtimes reach the store only through the daemon",
		"go.etcd.io/bbolt":                        "the runtime SDK must stay light",
		"github.com/rs/zerolog":                   "the runtime never logs",
		"testing":                                 "no test code in production binaries",
	})
}
