package memgraph

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/...": "memgraph imports no quasim package",
		"net":                          "memgraph does no I/O",
		"os/exec":                      "memgraph does no I/O",
		"testing":                      "no test code in production",
	})
}
