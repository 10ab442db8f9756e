package evolve

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/quasim/quasim/genome"
)

// esAndWorst are es and a member proposing bs's slowest configs first,
// one a portfolio must learn to ignore.
func esAndWorst(bs BenchSpace) []Member {
	worst := worstFirst(bs)
	return []Member{
		{Name: "es", New: factories["es"]},
		{Name: "worst", New: func(s *genome.Space, _ uint64) Strategy { return NewRanked(s, worst) }},
	}
}

// worstFirst ranks bs's valid configs slowest first.
func worstFirst(bs BenchSpace) []genome.Config {
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
	return worst
}

// portfolioRuns runs a portfolio of members under opt for seeds, and returns
// its score at ks and the share of the evaluations after the design
// given to member share.
func portfolioRuns(t *testing.T, bs BenchSpace, members []Member, opt PortfolioOptions, seeds int, ks []int, share string) (Score, float64) {
	t.Helper()
	var runs []BenchRun
	got := 0.0
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
		got += float64(a[share]) / float64(slices.Max(ks)-a[DesignName]) / float64(seeds)
		runs = append(runs, r)
	}
	return ScoreRuns(bs.Name, "portfolio", runs, bs.Optimum, ks), got
}

// TestJudgePays checks that the judge is what pays in a pooled
// portfolio: beside es, a member that proposes the slowest configs first
// has its proposals passed over, so the portfolio scores above the same
// members given the evaluations uniformly at random.
func TestJudgePays(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	members := esAndWorst(bs)
	ks := []int{25, 50}
	const seeds = 40
	for _, j := range []string{JudgeMean, JudgeEI} {
		judged, jShare := portfolioRuns(t, bs, members, PortfolioOptions{Judge: j}, seeds, ks, "es")
		uniform, uShare := portfolioRuns(t, bs, members, PortfolioOptions{Uniform: true}, seeds, ks, "es")
		for _, k := range ks {
			t.Logf("k=%d: judge %s %.3f (es share %.2f), uniform %.3f (es share %.2f)", k, j, judged.At[k], jShare, uniform.At[k], uShare)
			if judged.At[k] < uniform.At[k]+0.01 {
				t.Errorf("k=%d: judge %s %.3f, uniform %.3f: the judge does not pay", k, j, judged.At[k], uniform.At[k])
			}
		}
		if j == JudgeMean && jShare < uShare+0.1 {
			t.Errorf("judge %s gave es %.2f of the evaluations, uniform %.2f: it does not prefer what looks good", j, jShare, uShare)
		}
	}
}

// TestJudgeFailureModel checks the judge's failure model
// (PortfolioOptions.FailureModel): fitted to random results on a space
// with a failing region, it judges the region's configs likely to fail
// and the others not, and discounts their scores.
func TestJudgeFailureModel(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	fails := func(c genome.Config) bool { return c[0]+c[1] >= 9 } // beside the optimum, a=5
	rng := rand.New(rand.NewPCG(1, 2))
	var told []Result
	all := bs.Space.All()
	for _, i := range rng.Perm(len(all))[:150] {
		c := all[i]
		m, _ := bs.Measure(c)
		told = append(told, Result{Config: c, OK: m.OK && !fails(c), Value: m.Time})
	}
	var levels []int
	for _, p := range bs.Space.Params() {
		levels = append(levels, len(p.Values))
	}
	j := fitJudge(rand.New(rand.NewPCG(3, 4)), told, levels, true)
	in, out, nIn, nOut := 0.0, 0.0, 0, 0
	for _, c := range all {
		if fails(c) {
			in += j.pFail(c)
			nIn++
		} else {
			out += j.pFail(c)
			nOut++
		}
	}
	in, out = in/float64(nIn), out/float64(nOut)
	t.Logf("judged chance of failing: %.2f in the failing region, %.2f outside", in, out)
	if in < 0.6 || out > 0.2 {
		t.Errorf("judged chance of failing %.2f in the failing region, %.2f outside", in, out)
	}
	if off := fitJudge(rand.New(rand.NewPCG(3, 4)), told, levels, false); off.pFail(all[0]) != 0 {
		t.Errorf("a judge without the failure model judges a chance of failing")
	}
}

// TestScreenPays checks the judge's pre-selection (PortfolioOptions.Screen):
// es proposing three children of which the judge measures the one of
// highest expected improvement scores above es measuring each child it
// breeds, once the model has results to go on (at k=25, while es draws
// its first population at random, the two are level).
func TestScreenPays(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	members := []Member{{Name: "es", New: factories["es"]}}
	ks := []int{50, 100}
	const seeds = 40
	screened, _ := portfolioRuns(t, bs, members, PortfolioOptions{Screen: 3}, seeds, ks, "es")
	plain, _ := portfolioRuns(t, bs, members, PortfolioOptions{}, seeds, ks, "es")
	for _, k := range ks {
		t.Logf("k=%d: screened %.3f, plain %.3f", k, screened.At[k], plain.At[k])
		if screened.At[k] < plain.At[k]+0.01 {
			t.Errorf("k=%d: screened %.3f, plain %.3f: the screen does not pay", k, screened.At[k], plain.At[k])
		}
	}
}
