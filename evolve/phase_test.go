package evolve

import (
	"math"
	"slices"
	"testing"

	"github.com/quasim/quasim/genome"
)

// A member is given evaluations only inside its window: es from 30 asked
// on, random until 30. Outside it the member is still told every result.
func TestPortfolioMemberWindow(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	members := []Member{
		{Name: "es", New: factories["es"], From: 30},
		{Name: "random", New: factories["random"], Until: 30},
	}
	for seed := range uint64(4) {
		p := NewPortfolio(bs.Space, seed, members, PortfolioOptions{})
		for n := range 60 {
			cs, err := p.Ask(1)
			if err != nil || len(cs) != 1 {
				t.Fatalf("Ask: %v %v", cs, err)
			}
			by := p.ProposedBy(cs[0])
			if n >= p.opt.Init && (n < 30 && by != "random" || n >= 30 && by != "es") {
				t.Fatalf("seed %d: evaluation %d given to %q", seed, n+1, by)
			}
			m, _ := bs.Measure(cs[0])
			if err := p.Tell([]Result{{Config: cs[0], OK: m.OK, Value: m.Time}}); err != nil {
				t.Fatal(err)
			}
		}
		if es := p.strats[0].(*ES); len(es.st.H.Told) != 60 {
			t.Errorf("seed %d: es was told %d results, want all 60", seed, len(es.st.H.Told))
		}
	}
}

// A member marked First proposes before the bandit whenever it has
// something: from its window on, every new best's one-step neighbourhood
// is swept before the other members get an evaluation.
func TestPortfolioFirstPolishes(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	const from = 25
	members := []Member{
		{Name: "es", New: factories["es"]},
		{Name: LocalName, New: func(s *genome.Space, seed uint64) Strategy { return NewLocal(s, seed, LocalOptions{Incumbent: true}) }, From: from, First: true},
	}
	for seed := range uint64(4) {
		p := NewPortfolio(bs.Space, seed, members, PortfolioOptions{})
		best, bestC := math.Inf(1), genome.Config(nil)
		swept := 0
		for n := range 150 {
			cs, err := p.Ask(1)
			if err != nil || len(cs) != 1 {
				t.Fatalf("Ask: %v %v", cs, err)
			}
			c, by := cs[0], p.ProposedBy(cs[0])
			if n < from && by == LocalName {
				t.Fatalf("seed %d: evaluation %d given to the sweep before its window", seed, n+1)
			}
			if n >= from && bestC != nil {
				open := slices.ContainsFunc(bs.Space.Neighbours(bestC), func(nb genome.Config) bool { return !p.st.H.Known(nb) || nb.Equal(c) })
				if open && by != LocalName {
					t.Fatalf("seed %d: evaluation %d given to %q with the best's neighbourhood not swept", seed, n+1, by)
				}
				if by == LocalName {
					swept++
					if !slices.ContainsFunc(bs.Space.Neighbours(bestC), c.Equal) {
						t.Fatalf("seed %d: the sweep asked %v, not a neighbour of the best %v", seed, c, bestC)
					}
				}
			}
			m, _ := bs.Measure(c)
			if m.OK && m.Time < best {
				best, bestC = m.Time, c
			}
			if err := p.Tell([]Result{{Config: c, OK: m.OK, Value: m.Time}}); err != nil {
				t.Fatal(err)
			}
		}
		if swept == 0 {
			t.Errorf("seed %d: the sweep never ran: %v", seed, p.Allocation())
		}
	}
}
