package memgraph

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realSeed seeds the search on the real networks, so docs/kernel-authors/memgraph.md's table
// is reproducible.
const realSeed = 1

func loadReal(t testing.TB) map[string]*Graph {
	t.Helper()
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) < 8 {
		t.Fatalf("want at least 8 real graphs in testdata, got %d (%v)", len(files), err)
	}
	out := map[string]*Graph{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = g
	}
	return out
}

// TestRealNetworks plans the mediapipe graphs of testdata and prints the
// docs/kernel-authors/memgraph.md's table (go test ./memgraph -run TestRealNetworks -v): peaks
// over the lower bound of the model's own op order. Ours must never be
// worse than the better baseline, and better on average. The last column
// lets the planner choose the op order (the graph's edges allow it).
func TestRealNetworks(t *testing.T) {
	graphs := loadReal(t)
	var sumS, sumB, sumO, sumF float64
	var b strings.Builder
	fmt.Fprintf(&b, "| network | ops | tensors | lower bound (bytes) | greedy by size | greedy by breadth | ours | ours, order free |\n|---|---|---|---|---|---|---|---|\n")
	for _, name := range sortedKeys(graphs) {
		g := graphs[name]
		r, err := Plan(g, Options{Rand: rand.New(rand.NewPCG(realSeed, 0))})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Peak > min(r.BySize, r.ByBreadth) {
			t.Errorf("%s: ours %d worse than the better baseline %d", name, r.Peak, min(r.BySize, r.ByBreadth))
		}
		free := *g
		free.Order = "free"
		rf, err := Plan(&free, Options{Rand: rand.New(rand.NewPCG(realSeed, 0))})
		if err != nil {
			t.Fatalf("%s, order free: %v", name, err)
		}
		lb := float64(r.LowerBound)
		s, br, o := float64(r.BySize)/lb, float64(r.ByBreadth)/lb, float64(r.Peak)/lb
		f := float64(rf.Peak) / lb
		sumS, sumB, sumO, sumF = sumS+s, sumB+br, sumO+o, sumF+f
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.4f | %.4f | %.4f | %.4f |\n", name, len(g.Ops), len(g.Tensors), r.LowerBound, s, br, o, f)
	}
	n := float64(len(graphs))
	fmt.Fprintf(&b, "| **mean** | | | | %.4f | %.4f | %.4f | %.4f |\n", sumS/n, sumB/n, sumO/n, sumF/n)
	t.Log("\n" + b.String())
	if sumO >= min(sumS, sumB) {
		t.Errorf("ours %.4f is not better on average than the better baseline %.4f", sumO/n, min(sumS, sumB)/n)
	}
}
