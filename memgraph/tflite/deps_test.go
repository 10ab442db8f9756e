package tflite

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/internal/...": "tflite depends on memgraph only",
		"github.com/quasim/quasim/daemon":       "tflite depends on memgraph only",
		"github.com/quasim/quasim/api":          "tflite depends on memgraph only",
		"net":                                   "tflite does no I/O",
		"testing":                               "no test code in production",
	})
}
