package collect

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/daemon":         "the pages read the daemon only over its API",
		"github.com/quasim/quasim/internal/store": "the pages read the store only over the API",
		"go.etcd.io/bbolt":                        "quasimctl links this package and never opens the store",
		"testing":                                 "no test code in production binaries",
	})
}
