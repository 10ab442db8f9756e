package tflite

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quasim/quasim/memgraph"
)

// TestTFLiteDir reads and plans every .tflite file of $QUASIM_TFLITE_DIR
// and prints docs/kernel-authors/memgraph.md's table of TFLite models
// from outside mediapipe (the example and benchmark models of
// tensorflow/tflite-micro):
//
//	QUASIM_TFLITE_DIR=DIR go test ./memgraph/tflite -run TestTFLiteDir -v
func TestTFLiteDir(t *testing.T) {
	dir := os.Getenv("QUASIM_TFLITE_DIR")
	if dir == "" {
		t.Skip("QUASIM_TFLITE_DIR is not set: point it at a directory of .tflite files")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.tflite"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .tflite files in %s (%v)", dir, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| model | ops | tensors | lower bound (bytes) | peak (bytes) | peak / bound |\n|---|---|---|---|---|---|\n")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".tflite")
		g, err := Read(data, name)
		if err != nil {
			fmt.Fprintf(&b, "| %s | refused: %v | | | | |\n", name, err)
			continue
		}
		r, err := memgraph.Plan(g, memgraph.Options{Rand: rand.New(rand.NewPCG(1, 0))})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.4f |\n", name, len(g.Ops), len(g.Tensors), r.LowerBound, r.Peak,
			float64(r.Peak)/float64(max(r.LowerBound, 1)))
	}
	t.Log("\n" + b.String())
}
