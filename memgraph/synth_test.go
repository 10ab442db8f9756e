package memgraph

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSyntheticNetworks prints peak / lower bound on synthGraph networks
// (skip connections make them harder than the real ones): go test
// ./memgraph -run TestSyntheticNetworks -v. Like on the real networks,
// ours must never be worse than the better baseline.
func TestSyntheticNetworks(t *testing.T) {
	if testing.Short() {
		t.Skip("plans 30 graphs with the search on")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| tensors | graphs | greedy by size | greedy by breadth | ours (4000 placements) |\n|---|---|---|---|---|\n")
	for _, n := range []int{100, 300, 1000} {
		var s, br, o float64
		const graphs = 10
		for seed := range uint64(graphs) {
			g := synthGraph(rand.New(rand.NewPCG(seed, uint64(n))), n)
			r, err := Plan(g, Options{Rand: rand.New(rand.NewPCG(seed, 1))})
			if err != nil {
				t.Fatal(err)
			}
			if r.Peak > min(r.BySize, r.ByBreadth) {
				t.Errorf("n=%d seed %d: ours %d worse than %d", n, seed, r.Peak, min(r.BySize, r.ByBreadth))
			}
			lb := float64(r.LowerBound)
			s, br, o = s+float64(r.BySize)/lb, br+float64(r.ByBreadth)/lb, o+float64(r.Peak)/lb
		}
		fmt.Fprintf(&b, "| %d | %d | %.4f | %.4f | %.4f |\n", n, graphs, s/graphs, br/graphs, o/graphs)
	}
	t.Log("\n" + b.String())
}
