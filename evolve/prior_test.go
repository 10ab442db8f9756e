package evolve

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/quasim/quasim/genome"
)

// syntheticPrior ranks the synthetic space (synthetic data, not a
// recording) by a distorted copy of its objective: the same kernel on a
// device that agrees with this one only roughly, so the head of the
// ranking holds the optimum's region but not in the right order.
func syntheticPrior(t testing.TB, bs BenchSpace) []genome.Config {
	t.Helper()
	var src Source
	for _, c := range bs.Space.All() {
		m, err := bs.Measure(c)
		if err != nil {
			t.Fatal(err)
		}
		src.Results = append(src.Results, Result{Config: c, OK: m.OK, Value: m.Time * (1 + 0.05*float64(c[3]+c[1]%3))})
	}
	return RankTransfer(bs.Space, []Source{src})
}

func warmed(f Factory, prior []genome.Config) Factory {
	return func(s *genome.Space, seed uint64) Strategy {
		st := f(s, seed)
		st.(WarmStarter).WarmStart(prior)
		return st
	}
}

// A warm start's πBO weight is exp(-Prior*q/n): 1 at the top of the
// ranking, smaller down it and smallest past the head, and it fades
// towards 1 as results accumulate. A cold forest weights nothing.
func TestForestPriorWeight(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	prior := syntheticPrior(t, bs)
	f := NewForest(bs.Space, 1, ForestOptions{Prior: 10})
	if w := f.priorWeight(prior[0]); w != 1 {
		t.Errorf("cold forest weight %v, want 1", w)
	}
	f.WarmStart(prior)
	head := len(f.st.Prior.Configs)
	if head >= len(prior) {
		t.Fatalf("head of %d holds the whole ranking of %d", head, len(prior))
	}
	tests := []struct {
		name string
		c    genome.Config
		n    int
		want float64
	}{
		{"top", prior[0], 10, 1},
		{"head", prior[head/2], 10, math.Exp(-10 * float64(head/2) / float64(len(prior)) / 10)},
		{"past the head", prior[head], 10, math.Exp(-1)},
		{"past the head later", prior[head], 100, math.Exp(-0.1)},
	}
	for _, tt := range tests {
		f.st.FitAt = tt.n
		if got := f.priorWeight(tt.c); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: priorWeight(%v) after %d = %v, want %v", tt.name, tt.c, tt.n, got, tt.want)
		}
	}
	// Turned off (the option prior=0), the prior weights nothing.
	off := NewForest(bs.Space, 1, ForestOptions{Prior: -1})
	off.WarmStart(prior)
	off.st.FitAt = 10
	if w := off.priorWeight(prior[head]); w != 1 {
		t.Errorf("forest.prior=0: weight past the head %v, want 1", w)
	}
}

// Warm-started, every strategy that takes a prior draws its random configs
// (the initial design before its model or population) from the prior's
// head, as πBO samples its initial design from the prior; cold, they come
// from the whole space.
func TestWarmDrawsFromHead(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	prior := syntheticPrior(t, bs)
	in := map[string]bool{}
	for _, c := range NewPriorHead(bs.Space, prior).Configs {
		in[bs.Space.Key(c)] = true
	}
	for _, name := range []string{"es", "forest"} {
		for _, warm := range []bool{false, true} {
			f := factories[name]
			if warm {
				f = warmed(f, prior)
			}
			s := f(bs.Space, 3)
			cs, err := s.Ask(8)
			if err != nil || len(cs) != 8 {
				t.Fatalf("%s Ask(8) = %v, %v", name, cs, err)
			}
			n := 0
			for _, c := range cs {
				if in[bs.Space.Key(c)] {
					n++
				}
			}
			if warm && n != len(cs) {
				t.Errorf("warm %s: %d of its first %d configs in the prior's head, want all", name, n, len(cs))
			}
			if !warm && n == len(cs) {
				t.Errorf("cold %s: all its first %d configs in the prior's head", name, len(cs))
			}
		}
	}
}

// On a space where the prior's head holds the optimum's region, a warm
// forest gets closer to the optimum in few evaluations than a cold one,
// and its weight on the prior pays beside the draws from the head alone.
func TestForestWarmStartPays(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	prior := syntheticPrior(t, bs)
	ks := []int{15, 25}
	score := func(f Factory) Score {
		var runs []BenchRun
		for seed := range uint64(20) {
			r, err := Run(context.Background(), bs, f, seed, RunOptions{Budget: slices.Max(ks)})
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, r)
		}
		return ScoreRuns(bs.Name, "", runs, bs.Optimum, ks)
	}
	cold := score(factories["forest"])
	warm := score(warmed(factories["forest"], prior))
	// A prior of no strength (a weight of 1 to rounding) leaves the draws
	// from the head.
	unweighted := score(warmed(func(s *genome.Space, seed uint64) Strategy {
		return NewForest(s, seed, ForestOptions{Prior: 1e-12})
	}, prior))
	for _, k := range ks {
		t.Logf("k=%d: warm %.3f, warm unweighted %.3f, cold %.3f", k, warm.At[k], unweighted.At[k], cold.At[k])
		if warm.At[k] < cold.At[k]+0.02 {
			t.Errorf("k=%d: warm forest %.3f, cold %.3f: the prior does not pay", k, warm.At[k], cold.At[k])
		}
	}
	if warm.At[25] <= unweighted.At[25] {
		t.Errorf("k=25: weighted %.3f <= unweighted %.3f: the πBO weight does not pay", warm.At[25], unweighted.At[25])
	}
}

// A warm portfolio hands the prior to its members that take one; their
// states carry it, so a run resumed into a portfolio that was never
// warm-started (the daemon's next cycle) goes on identically.
func TestWarmMembersResume(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	prior := syntheticPrior(t, bs)
	members := []Member{
		{Name: "es", New: factories["es"]},
		{Name: "forest", New: factories["forest"]},
	}
	warm := func(s *genome.Space, seed uint64) Strategy {
		p := NewPortfolio(s, seed, members, PortfolioOptions{})
		p.WarmStart(prior)
		return p
	}
	p := warm(bs.Space, 7).(*Portfolio)
	for i, s := range p.strats[:len(members)] {
		var h *PriorHead
		switch s := s.(type) {
		case *ES:
			h = s.st.Prior
		case *Forest:
			h = s.st.Prior
		}
		if h == nil || len(h.Configs) == 0 {
			t.Errorf("member %s was not given the prior", members[i].Name)
		}
	}
	a, err := Run(context.Background(), bs, warm, 7, RunOptions{Budget: 80})
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{12, 40} {
		b, err := Run(context.Background(), bs, func(s *genome.Space, seed uint64) Strategy {
			if seed == 7 {
				return warm(s, seed)
			}
			return NewPortfolio(s, seed, members, PortfolioOptions{})
		}, 7, RunOptions{Budget: 80, RoundTripAt: at})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keys(a.Trace), keys(b.Trace)) {
			t.Fatalf("resumed at %d into a cold portfolio, the run differs at evaluation %d", at, firstDiff(keys(a.Trace), keys(b.Trace)))
		}
	}
}
