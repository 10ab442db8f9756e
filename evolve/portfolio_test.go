package evolve

import (
	"slices"
	"testing"

	"github.com/quasim/quasim/genome"
)

// TestBanditBeatsUniform checks that the bandit's allocation is what pays:
// beside es, a member that proposes the slowest configs first gets few
// evaluations, so the portfolio scores above the same members allocated
// uniformly at random or in turn, which give that member half.
func TestBanditBeatsUniform(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	members := esAndWorst(bs)
	ks := []int{25, 50}
	const seeds = 60
	score := func(opt PortfolioOptions, _ string) (Score, float64) {
		return portfolioRuns(t, bs, members, opt, seeds, ks, "es")
	}
	bandit, bShare := score(PortfolioOptions{}, "bandit")
	for _, base := range []struct {
		name string
		opt  PortfolioOptions
	}{{"uniform", PortfolioOptions{Uniform: true}}, {"round robin", PortfolioOptions{RoundRobin: true}}} {
		sc, share := score(base.opt, base.name)
		for _, k := range ks {
			t.Logf("k=%d: bandit %.3f (es share %.2f), %s %.3f (es share %.2f)", k, bandit.At[k], bShare, base.name, sc.At[k], share)
			if bandit.At[k] < sc.At[k]+0.01 {
				t.Errorf("k=%d: bandit %.3f, %s allocation %.3f: the bandit does not pay", k, bandit.At[k], base.name, sc.At[k])
			}
		}
		if bShare < share+0.15 {
			t.Errorf("es share: bandit %.2f, %s %.2f: the bandit does not follow the payoff", bShare, base.name, share)
		}
	}
}

// A policy written before a member joined the portfolio (forest, added
// after quasimd had stored policies of three members) restores: the new
// member starts afresh, told every result, the others keep their state,
// their bandit statistics and the configs they have pending.
func TestPortfolioRestoresWithAddedMember(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	es := Member{Name: "es", New: factories["es"]}
	rnd := Member{Name: "random", New: factories["random"]}
	forest := Member{Name: "forest", New: factories["forest"]}
	old := NewPortfolio(bs.Space, 4, []Member{es, rnd}, PortfolioOptions{})
	tell := func(p *Portfolio, cs []genome.Config) {
		t.Helper()
		var rs []Result
		for _, c := range cs {
			m, _ := bs.Measure(c)
			rs = append(rs, Result{Config: c, OK: m.OK, Value: m.Time})
		}
		if err := p.Tell(rs); err != nil {
			t.Fatal(err)
		}
	}
	for range 30 {
		cs, _ := old.Ask(1)
		tell(old, cs)
	}
	pending, _ := old.Ask(3)
	owners := make([]string, len(pending))
	for i, c := range pending {
		owners[i] = old.ProposedBy(c)
	}
	data, err := old.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	before := old.Allocation()
	restore := func() *Portfolio {
		p := NewPortfolio(bs.Space, 9, []Member{es, forest, rnd}, PortfolioOptions{})
		if err := p.UnmarshalBinary(data); err != nil {
			t.Fatalf("restoring a policy without the forest member: %v", err)
		}
		return p
	}
	p := restore()
	for i, c := range pending {
		if got := p.ProposedBy(c); got != owners[i] {
			t.Errorf("pending %v proposed by %q after restoring, %q before", c, got, owners[i])
		}
	}
	if a := p.Allocation(); a["es"] != before["es"] || a["random"] != before["random"] || a["forest"] != 0 {
		t.Errorf("allocation %v after restoring, %v before", a, before)
	}
	tell(p, pending)
	run := func(p *Portfolio) []genome.Config {
		var out []genome.Config
		for range 40 {
			cs, err := p.Ask(1)
			if err != nil || len(cs) != 1 {
				t.Fatalf("Ask: %v %v", cs, err)
			}
			tell(p, cs)
			out = append(out, cs[0])
		}
		return out
	}
	a := run(p)
	if p.Allocation()["forest"] == 0 {
		t.Errorf("the added member got no evaluation in 40: %v", p.Allocation())
	}
	q := restore()
	tell(q, pending)
	if b := run(q); !slices.EqualFunc(a, b, genome.Config.Equal) {
		t.Errorf("two restores of the same policy went different ways")
	}
	// A policy of members that are not the portfolio's is still refused.
	other := NewPortfolio(bs.Space, 9, []Member{forest}, PortfolioOptions{})
	if err := other.UnmarshalBinary(data); err == nil {
		t.Errorf("a policy of es and random restored into a portfolio of forest alone")
	}
}
