package memgraph

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLayoutNeverWorse: on random graphs with random access patterns
// and caches, Layout's plan passes the pairwise check, keeps the peak,
// and its reported misses are what Misses says of it and no costlier
// than the plan given.
func TestLayoutNeverWorse(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	specs := []CacheSpec{
		{Levels: []CacheLevel{{Size: 256, Line: 16, Assoc: 2}, {Size: 1024, Line: 16, Assoc: 4}}},
		{Levels: []CacheLevel{{Size: 512, Line: 64, Assoc: 0}}},
	}
	moved := 0
	n := 1000
	if testing.Short() {
		n = 200
	}
	for k := range n {
		g := randomGraph(rng, k%3 == 0)
		c, _ := compile(g)
		for op := range g.Ops {
			if a := randomAccess(rng, g, c, int32(op)); a != nil && rng.IntN(2) == 0 {
				g.Ops[op].Access = []Access{*a}
			}
		}
		r, err := Plan(g, Options{})
		if err != nil {
			t.Fatal(err)
		}
		cs := specs[k%len(specs)]
		out, rep, err := Layout(g, r, cs, LayoutOptions{Rand: rng, Iters: 5})
		if err != nil {
			t.Fatalf("graph %d: %v", k, err)
		}
		if !bruteCheck(c.size, c.align, out.Intervals, out.Offsets, out.Peak) || out.Peak > r.Peak || rep.PeakAfter != out.Peak {
			t.Fatalf("graph %d: bad layout %+v (peak before %d)", k, out, r.Peak)
		}
		est, err := Misses(g, out, cs)
		if err != nil {
			t.Fatal(err)
		}
		var before, after int64
		w := int64(1)
		for i, l := range est.Levels {
			if l.Misses != rep.MissesAfter[i] {
				t.Fatalf("graph %d: report says %v misses, Misses %d at level %d", k, rep.MissesAfter, l.Misses, i)
			}
			before, after = before+w*rep.MissesBefore[i], after+w*l.Misses
			w *= 10
		}
		if after > before {
			t.Fatalf("graph %d: layout raised the cost %d -> %d", k, before, after)
		}
		if rep.Moved > 0 {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("layout never moved a tensor")
	}
}

// layoutNets are the networks of docs/kernel-authors/memgraph.md's layout table (the largest
// takes seconds per estimate); "" means all.
var layoutNets = "face_detection_short_range,hand_landmark_lite,pose_landmark_full,selfie_segmentation,"

// layoutCache is the hierarchy of docs/kernel-authors/memgraph.md's layout table: a 32 KiB
// 8-way D1 and a 1 MiB 16-way LL, 64-byte lines.
var layoutCache = CacheSpec{Levels: []CacheLevel{{Name: "D1", Size: 32 << 10, Line: 64, Assoc: 8}, {Name: "LL", Size: 1 << 20, Line: 64, Assoc: 16}}}

// TestLayoutNetworks prints what Layout changes on the real networks
// (default accesses) and on a hand-made example (go test ./memgraph -run
// TestLayoutNetworks -v).
func TestLayoutNetworks(t *testing.T) {
	if testing.Short() {
		t.Skip("estimates misses of 14 networks a few times each")
	}
	graphs := loadReal(t)
	var b strings.Builder
	fmt.Fprintf(&b, "| graph | accesses | D1 misses before → after | LL misses before → after | peak before → after | tensors moved | plans tried | winner |\n|---|---|---|---|---|---|---|---|\n")
	row := func(name string, g *Graph) {
		r, err := Plan(g, Options{Rand: rand.New(rand.NewPCG(realSeed, 0))})
		if err != nil {
			t.Fatal(err)
		}
		out, rep, err := Layout(g, r, layoutCache, LayoutOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		est, err := Misses(g, out, layoutCache)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "| %s | %d | %d → %d | %d → %d | %d → %d | %d | %d | %s |\n", name, est.Accesses, rep.MissesBefore[0], rep.MissesAfter[0],
			rep.MissesBefore[1], rep.MissesAfter[1], rep.PeakBefore, rep.PeakAfter, rep.Moved, rep.Tried, rep.Strategy)
	}
	for _, name := range sortedKeys(graphs) {
		if layoutNets == "" || strings.Contains(layoutNets, name+",") {
			row(name, graphs[name])
		}
	}
	t.Log("\n" + b.String())
}
