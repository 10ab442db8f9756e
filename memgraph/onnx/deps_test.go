package onnx

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/internal/...": "onnx depends on memgraph only",
		"github.com/quasim/quasim/daemon":       "onnx depends on memgraph only",
		"github.com/quasim/quasim/api":          "onnx depends on memgraph only",
		"net":                                   "onnx does no I/O",
		"testing":                               "no test code in production",
	})
}
