package cli

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/daemon":         "the CLI talks to the daemon over its socket",
		"github.com/quasim/quasim/internal/tuner": "the CLI never tunes in-process",
		"go.etcd.io/bbolt":                        "the CLI never opens the store",
		"testing":                                 "no test code in production binaries",
	})
}
