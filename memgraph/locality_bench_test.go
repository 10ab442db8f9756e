package memgraph

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkReuseDistance: stack distances of 1,000,000 references over
// 100,000 lines, half of them to one of the last 64 lines referenced.
func BenchmarkReuseDistance(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, lines = 1_000_000, 100_000
	refs := make([]int64, n)
	for i := range refs {
		if i > 64 && rng.IntN(2) == 0 {
			refs[i] = refs[i-1-rng.IntN(64)]
		} else {
			refs[i] = rng.Int64N(lines)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		r := newReuse(lines)
		for _, l := range refs {
			r.ref(l)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/ref")
}

// BenchmarkMisses: the miss estimate of the largest real network, every
// op reading and writing its tensors in sequence, for layoutCache.
func BenchmarkMisses(b *testing.B) {
	g := loadReal(b)["pose_landmark_heavy"]
	r, err := Plan(g, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var est *MissEstimate
	for b.Loop() {
		if est, err = Misses(g, r, layoutCache); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(est.Refs), "refs")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(est.Refs), "ns/ref")
}

// BenchmarkPrefetch: the schedule of the largest real network with host
// weights (model-derived costs) at the least cap, and of a 100,000-op
// synthetic graph with a weight per op, without a cap and at the least.
func BenchmarkPrefetch(b *testing.B) {
	t := &testing.T{}
	bench := func(b *testing.B, g *Graph, least bool) {
		r, err := Plan(g, Options{})
		if err != nil {
			b.Fatal(err)
		}
		opt := PrefetchOptions{Bandwidth: realBandwidth, LatencyNS: realLatencyNS}
		if least {
			opt.Cap = minCap(t, g, r)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Prefetch(g, r, opt); err != nil {
				b.Fatal(err)
			}
		}
	}
	heavy := withHostWeights(loadReal(b)["pose_landmark_heavy"])
	b.Run("pose_landmark_heavy", func(b *testing.B) { bench(b, heavy, true) })
	rng := rand.New(rand.NewPCG(3, 3))
	synth := withSyntheticWeights(rng, synthGraph(rng, 100_000))
	b.Run("synthetic100k", func(b *testing.B) { bench(b, synth, false) })
	b.Run("synthetic100k-least", func(b *testing.B) { bench(b, synth, true) })
	b.Run("wide50k-least", func(b *testing.B) {
		// Prefetch reads the plan's order, not its offsets, and best fit
		// of 50,000 tensors that all live together is slow: order only.
		g := wideHost(50_000)
		r := &Result{Order: make([]int32, len(g.Ops)), Offsets: make([]int64, len(g.Tensors))}
		for k := range r.Order {
			r.Order[k] = int32(k)
		}
		opt := PrefetchOptions{Bandwidth: realBandwidth, LatencyNS: realLatencyNS, Cap: minCap(t, g, r)}
		b.ReportAllocs()
		var s *Schedule
		for b.Loop() {
			var err error
			if s, err = Prefetch(g, r, opt); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(s.Recopies), "recopies")
	})
}

// wideHost is a chain of n ops with n host tensors of 1 KiB, each read
// by the first and the last op: every copy's life spans the graph, the
// case that made op-by-op bookkeeping quadratic.
func wideHost(n int) *Graph {
	g := synthGraph(rand.New(rand.NewPCG(5, 5)), n)
	for k := range n {
		g.Ops[k].Duration = 1000
		g.Tensors = append(g.Tensors, Tensor{ID: "h" + strconv.Itoa(k), Bytes: 1024, Host: true, Consumers: []string{g.Ops[0].ID, g.Ops[n-1].ID}})
	}
	return g
}
