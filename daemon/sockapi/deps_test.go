package sockapi

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

// The HTTP layer reaches the lifecycle only through what daemon hands New;
// daemon importing sockapi makes an import of daemon here a cycle already.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/internal/tuner":    "cycles are the lifecycle's: handlers get them through the route table",
		"github.com/quasim/quasim/internal/spec":     "specs are the lifecycle's",
		"github.com/quasim/quasim/evaluate/...":      "measuring is the lifecycle's",
		"github.com/quasim/quasim/introspect":        "devices are the lifecycle's",
		"github.com/quasim/quasim/fleet":             "the fleet is the lifecycle's",
		"github.com/quasim/quasim/internal/pipeline": "pipelines are the lifecycle's",
		"github.com/robfig/cron/v3":                  "scheduling is the lifecycle's",
	})
}
