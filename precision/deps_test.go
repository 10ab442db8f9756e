package precision

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/...": "precision is a leaf: the genome, evaluators and verifiers build on it",
		"net":                          "precision does no I/O",
		"testing":                      "no test code in production",
	})
}
