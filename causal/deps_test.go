package causal

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/...": "causal imports nothing of quasim",
		"go.etcd.io/bbolt":             "causal does no I/O",
		"net":                          "causal does no I/O",
		"os/exec":                      "causal does no I/O",
		"testing":                      "no test code in production",
	})
}
