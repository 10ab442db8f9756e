package causalview

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/daemon":         "quasimctl links this package",
		"github.com/quasim/quasim/internal/store": "quasimctl links this package",
		"go.etcd.io/bbolt":                        "quasimctl links this package",
		"net":                                     "pure: no I/O",
		"os/exec":                                 "pure: no I/O",
		"testing":                                 "no test code in production",
	})
}
