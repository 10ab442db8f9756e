package onnx

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quasim/quasim/memgraph"
)

// TestRealONNXNetworks plans the graphs of testdata (derived by
// testdata/regen.sh from the ONNX models of npm packages that
// testdata/npm-models.txt lists) and
// prints docs/kernel-authors/memgraph.md's table (go test ./memgraph/onnx -run
// TestRealONNXNetworks -v). Ours must never be worse than the better
// baseline. The last column lets the planner choose the op order.
func TestRealONNXNetworks(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) < 16 {
		t.Fatalf("want the 16 ONNX graphs in testdata, got %d (%v)", len(files), err)
	}
	slices.Sort(files)
	var b strings.Builder
	fmt.Fprintf(&b, "| network | ops | tensors | lower bound (bytes) | greedy by size | greedy by breadth | ours | ours, order free |\n|---|---|---|---|---|---|---|---|\n")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		g, err := memgraph.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		r, err := memgraph.Plan(g, memgraph.Options{Rand: rand.New(rand.NewPCG(1, 0))})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if r.Peak > min(r.BySize, r.ByBreadth) {
			t.Errorf("%s: ours %d worse than the better baseline %d", f, r.Peak, min(r.BySize, r.ByBreadth))
		}
		free := *g
		free.Order = "free"
		rf, err := memgraph.Plan(&free, memgraph.Options{Rand: rand.New(rand.NewPCG(1, 0))})
		if err != nil {
			t.Fatalf("%s, order free: %v", f, err)
		}
		lb := float64(r.LowerBound)
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.4f | %.4f | %.4f | %.4f |\n", g.Name, len(g.Ops), len(g.Tensors), r.LowerBound,
			float64(r.BySize)/lb, float64(r.ByBreadth)/lb, float64(r.Peak)/lb, float64(rf.Peak)/lb)
	}
	t.Log("\n" + b.String())
}
