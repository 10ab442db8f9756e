package genome

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/evolve":   "genome is the leaf of the search stack",
		"github.com/quasim/quasim/evaluate": "genome is the leaf of the search stack",
		"net":                               "genome does no I/O",
		"testing":                           "no test code in production",
	})
}
