package evolve

import (
	"cmp"
	"context"
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
	var worst []genome.Config
	for _, c := range bs.Space.All() {
		if m, _ := bs.Measure(c); m.OK {
			worst = append(worst, c)
		}
	}
	slices.SortStableFunc(worst, func(a, b genome.Config) int {
		ma, _ := bs.Measure(a)
		mb, _ := bs.Measure(b)
		return cmp.Compare(mb.Time, ma.Time)
	})
	members := []Member{
		{Name: "es", New: factories["es"]},
		{Name: "worst", New: func(s *genome.Space, _ uint64) Strategy { return NewRanked(s, worst) }},
	}
	ks := []int{25, 50}
	const seeds = 60
	score := func(opt PortfolioOptions, name string) (Score, float64) {
		var runs []BenchRun
		share := 0.0
		for seed := range uint64(seeds) {
			var p *Portfolio
			f := func(s *genome.Space, seed uint64) Strategy {
				p = NewPortfolio(s, seed, members, opt)
				return p
			}
			r, err := Run(context.Background(), bs, f, seed, RunOptions{Budget: slices.Max(ks)})
			if err != nil {
				t.Fatal(err)
			}
			a := p.Allocation()
			share += float64(a["es"]) / float64(a["es"]+a["worst"]) / seeds
			runs = append(runs, r)
		}
		return ScoreRuns(bs.Name, name, runs, bs.Optimum, ks), share
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
