package evolve

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/evaluate/...":   "evolve is pure: evaluators are wired in by callers",
		"github.com/quasim/quasim/quantum_search": "strategies reach evolve through the wiring, not imports",
		"github.com/quasim/quasim/schedules":      "strategies reach evolve through the wiring, not imports",
		"go.etcd.io/bbolt":                        "evolve does no I/O",
		"net/http":                                "evolve does no I/O",
		"testing":                                 "no test code in production",
	})
}
