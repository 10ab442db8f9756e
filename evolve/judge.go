package evolve

import (
	"math"
	"math/rand/v2"

	"github.com/quasim/quasim/genome"
)

// judge ranks the candidates a pooled portfolio's members propose:
// expected improvement under a random forest fitted to the log values of
// the configs that ran, times the chance that a candidate runs at all,
// from a second forest fitted to which configs failed when asked
// (PortfolioOptions.FailureModel). A failed config costs an evaluation
// like any other, and a failure region (too much shared memory, too many
// registers) is as learnable as a slow one.
type judge struct {
	model *forest
	fail  *forest // nil when nothing failed, or failures are not modelled
	best  float64 // lowest log value fitted; +Inf when none ran
	worst float64 // highest log value fitted
	mean  bool    // JudgeMean: rank by expected value, not improvement
}

// judgeTrees is the size of each of the judge's forests: the forest
// member's default.
const judgeTrees = 16

// fitJudge fits a judge to told, drawing from rng. With failure off,
// failed configs are fitted as the forest member fits them, at the worst
// log value plus one, and no failure model is kept.
func fitJudge(rng *rand.Rand, told []Result, levels []int, failure bool) *judge {
	opt := forestOptions{trees: judgeTrees, minLeaf: 2, features: 5.0 / 6}
	j := &judge{best: math.Inf(1), worst: math.Inf(-1)}
	var (
		x, all [][]int
		ok     []Result
		failed []float64
		nfail  int
	)
	for _, r := range told {
		all = append(all, r.Config)
		if r.OK {
			x = append(x, r.Config)
			ok = append(ok, r)
			failed = append(failed, 0)
		} else {
			nfail++
			failed = append(failed, 1)
		}
	}
	if !failure {
		x, ok = all, told
	}
	y := LogTargets(ok)
	for _, v := range y {
		j.best, j.worst = min(j.best, v), max(j.worst, v)
	}
	j.model = fitForest(rng, x, y, levels, opt)
	if failure && nfail > 0 && nfail < len(told) {
		j.fail = fitForest(rng, all, failed, levels, opt)
	}
	return j
}

// pFail is the judged chance that c fails.
func (j *judge) pFail(c genome.Config) float64 {
	if j.fail == nil {
		return 0
	}
	m, _ := j.fail.predict(c)
	return min(max(m, 0), 1)
}

// score is c's expected improvement discounted by its chance of failing;
// before anything ran, only the chance of running.
func (j *judge) score(c genome.Config) float64 {
	run := 1 - j.pFail(c)
	if math.IsInf(j.best, 1) {
		return run
	}
	m, v := j.model.predict(c)
	if j.mean {
		// The expected log value, a failure counted at the worst plus one.
		return -(run*m + (1-run)*(j.worst+1))
	}
	return expectedImprovement(j.best, m, math.Sqrt(v)) * run
}
