package memgraph

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// synthGraph is a long network of n ops in a fixed order, one tensor per
// op (1 KiB to 1 MiB, uniform), each read by the
// next op and, one time in three, by a skip connection up to 32 ops later.
func synthGraph(rng *rand.Rand, n int) *Graph {
	g := &Graph{Name: "synthetic-" + strconv.Itoa(n), Ops: make([]Op, n), Tensors: make([]Tensor, n)}
	for k := range n {
		g.Ops[k] = Op{ID: "o" + strconv.Itoa(k)}
	}
	for k := range n {
		t := Tensor{ID: "t" + strconv.Itoa(k), Bytes: 1024 * (1 + rng.Int64N(1024))}
		if k == 0 {
			t.Input = true
		} else {
			t.Producer = g.Ops[k-1].ID
		}
		if k+1 < n {
			t.Consumers = append(t.Consumers, g.Ops[k+1].ID)
		}
		if j := k + 2 + rng.IntN(31); rng.IntN(3) == 0 && j < n {
			t.Consumers = append(t.Consumers, g.Ops[j].ID)
		}
		t.Output = k == n-1
		g.Tensors[k] = t
	}
	return g
}

func benchPlan(b *testing.B, g *Graph, opt func() Options) {
	b.ReportAllocs()
	var r *Result
	for b.Loop() {
		var err error
		if r, err = Plan(g, opt()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.Peak)/float64(r.LowerBound), "peak/bound")
}

// BenchmarkPlanReal: the largest real network, and the one where the
// search has the most to do.
func BenchmarkPlanReal(b *testing.B) {
	graphs := loadReal(b)
	for _, name := range []string{"pose_landmark_heavy", "hand_landmark_full"} {
		b.Run(name, func(b *testing.B) {
			benchPlan(b, graphs[name], func() Options { return Options{Rand: rand.New(rand.NewPCG(realSeed, 0))} })
		})
	}
}

// BenchmarkPlan100k: 100,000 tensors; the baselines alone, with 100
// search placements, and with Plan's default budget (400 at this size).
func BenchmarkPlan100k(b *testing.B) {
	g := synthGraph(rand.New(rand.NewPCG(9, 9)), 100_000)
	b.Run("baselines", func(b *testing.B) { benchPlan(b, g, func() Options { return Options{} }) })
	b.Run("search100", func(b *testing.B) {
		benchPlan(b, g, func() Options { return Options{Rand: rand.New(rand.NewPCG(1, 1)), Iters: 100} })
	})
	b.Run("default", func(b *testing.B) {
		benchPlan(b, g, func() Options { return Options{Rand: rand.New(rand.NewPCG(1, 1))} })
	})
}
