package evolve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/quasim/quasim/genome"
)

// TestLocalSweepsBest checks the sweep's order: every unknown neighbour of
// the best result before any of the runner-up's, and a new best's
// neighbourhood at once.
func TestLocalSweepsBest(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	for _, seed := range []uint64{3, 4} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			l := NewLocal(bs.Space, seed, LocalOptions{})
			rng := rand.New(rand.NewPCG(1, 2))
			all := bs.Space.All()
			var told []Result
			for range 40 {
				c := all[rng.IntN(len(all))]
				if slices.ContainsFunc(told, func(r Result) bool { return r.Config.Equal(c) }) {
					continue
				}
				m, _ := bs.Measure(c)
				told = append(told, Result{Config: c, OK: m.OK, Value: m.Time})
			}
			if err := l.Tell(told); err != nil {
				t.Fatal(err)
			}
			byValue := slices.Clone(told)
			byValue = slices.DeleteFunc(byValue, func(r Result) bool { return !r.OK })
			slices.SortStableFunc(byValue, func(a, b Result) int { return cmpFloat(a.Value, b.Value) })
			known := func(c genome.Config) bool {
				return slices.ContainsFunc(told, func(r Result) bool { return r.Config.Equal(c) })
			}
			unknownNeighbours := func(c genome.Config, asked []genome.Config) int {
				n := 0
				for _, nb := range bs.Space.Neighbours(c) {
					if !known(nb) && !slices.ContainsFunc(asked, nb.Equal) {
						n++
					}
				}
				return n
			}
			best := byValue[0].Config
			want := unknownNeighbours(best, nil)
			if want == 0 {
				t.Fatal("the best result's neighbourhood is known: pick another seed")
			}
			var asked []genome.Config
			for range want {
				cs, _ := l.Ask(1)
				if len(cs) != 1 || bs.Space.Distance(cs[0], best) == 0 || !slices.ContainsFunc(bs.Space.Neighbours(best), cs[0].Equal) {
					t.Fatalf("asked %v, not a neighbour of the best %v", cs, best)
				}
				asked = append(asked, cs[0])
			}
			// The best's neighbourhood is spent: the runner-up's comes next.
			for _, r := range byValue[1:] {
				if unknownNeighbours(r.Config, asked) > 0 {
					cs, _ := l.Ask(1)
					if len(cs) != 1 || !slices.ContainsFunc(bs.Space.Neighbours(r.Config), cs[0].Equal) {
						t.Fatalf("asked %v after the best's neighbourhood, not a neighbour of the runner-up %v", cs, r.Config)
					}
					asked = append(asked, cs[0])
					break
				}
			}
			// A new best moves the sweep to its neighbourhood.
			var found genome.Config
			for _, c := range all {
				m, _ := bs.Measure(c)
				if m.OK && m.Time < byValue[0].Value && !known(c) && !slices.ContainsFunc(asked, c.Equal) && len(bs.Space.Neighbours(c)) > 0 {
					found = c
					if err := l.Tell([]Result{{Config: c, OK: true, Value: m.Time}}); err != nil {
						t.Fatal(err)
					}
					told = append(told, Result{Config: c, OK: true, Value: m.Time})
					break
				}
			}
			if found == nil {
				t.Fatal("no better config to tell")
			}
			cs, _ := l.Ask(1)
			if len(cs) != 1 || !slices.ContainsFunc(bs.Space.Neighbours(found), cs[0].Equal) {
				t.Fatalf("asked %v after a new best %v, not its neighbour", cs, found)
			}
		})
	}
}

// With Incumbent the sweep proposes nothing once the best's neighbourhood
// is known, and the best's neighbours again after a new best.
func TestLocalIncumbentRests(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	l := NewLocal(bs.Space, 3, LocalOptions{Incumbent: true})
	tell := func(c genome.Config) {
		t.Helper()
		m, _ := bs.Measure(c)
		if err := l.Tell([]Result{{Config: c, OK: m.OK, Value: m.Time}}); err != nil {
			t.Fatal(err)
		}
	}
	// The worst valid config first, so that a better one follows.
	worst := worstFirst(bs)[0]
	tell(worst)
	for range len(bs.Space.Neighbours(worst)) {
		cs, _ := l.Ask(1)
		if len(cs) != 1 || !slices.ContainsFunc(bs.Space.Neighbours(worst), cs[0].Equal) {
			t.Fatalf("asked %v, not a neighbour of the only result %v", cs, worst)
		}
	}
	if cs, _ := l.Ask(1); len(cs) != 0 {
		t.Fatalf("asked %v with the best's neighbourhood pending", cs)
	}
	for _, nb := range bs.Space.Neighbours(worst) {
		tell(nb)
	}
	cs, _ := l.Ask(1)
	if len(cs) != 1 {
		t.Fatalf("nothing asked after a new best")
	}
}

// A member with nothing to propose rests, and is asked again once a new
// best is told: the incumbent sweep, its best's neighbourhood known,
// sweeps again around the next best another proposal finds.
func TestPortfolioMemberRests(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	members := []Member{
		{Name: LocalName, New: func(s *genome.Space, seed uint64) Strategy { return NewLocal(s, seed, LocalOptions{Incumbent: true}) }},
	}
	for seed := range uint64(5) {
		p := NewPortfolio(bs.Space, seed, members, PortfolioOptions{})
		best := math.Inf(1)
		for n := 0; ; n++ {
			cs, err := p.Ask(1)
			if err != nil || len(cs) != 1 || n == 500 {
				t.Fatalf("seed %d: Ask %v %v after %d: the sweep never rested", seed, cs, err, n)
			}
			m, _ := bs.Measure(cs[0])
			r := Result{Config: cs[0], OK: m.OK, Value: m.Time}
			rested := n >= p.opt.Init && p.ProposedBy(cs[0]) == DesignName
			if rested {
				// Whatever the portfolio asks in the sweep's place
				// is told as a new best.
				r.OK, r.Value = true, best/2
			}
			if r.OK {
				best = min(best, r.Value)
			}
			if err := p.Tell([]Result{r}); err != nil {
				t.Fatal(err)
			}
			if !rested {
				continue
			}
			cs, _ = p.Ask(1)
			if len(cs) != 1 || p.ProposedBy(cs[0]) != LocalName || !slices.ContainsFunc(bs.Space.Neighbours(r.Config), cs[0].Equal) {
				t.Errorf("seed %d: after a new best %v the portfolio asked %v of %q, not the sweep", seed, r.Config, cs, p.ProposedBy(cs[0]))
			}
			break
		}
	}
}
