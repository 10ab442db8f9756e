package evolve

import (
	"math"
	"slices"
)

// SeedSpread is, per k, the standard deviation over seeds of a strategy's
// mean fraction over the spaces: how far one seed's mean over the spaces
// strays. runs are the strategy's runs on every space; only seeds run on
// every space count. optimum gives each space's optimum.
func SeedSpread(runs []BenchRun, optimum func(space string) float64, ks []int) map[int]float64 {
	type key struct {
		seed uint64
		k    int
	}
	sum, n := map[key]float64{}, map[uint64]int{}
	spaces := map[string]bool{}
	for _, r := range runs {
		spaces[r.Space] = true
		fr := Fractions(r.Trace, optimum(r.Space))
		for _, k := range ks {
			sum[key{r.Seed, k}] += FractionAt(fr, k)
		}
		n[r.Seed]++
	}
	// Seeds in order, so that the sums, and the bits of the result, do not
	// depend on map order (bench and bench score must agree exactly).
	seeds := make([]uint64, 0, len(n))
	for seed := range n {
		seeds = append(seeds, seed)
	}
	slices.Sort(seeds)
	out := map[int]float64{}
	for _, k := range ks {
		var means []float64
		for _, seed := range seeds {
			if c := n[seed]; c == len(spaces) {
				means = append(means, sum[key{seed, k}]/float64(c))
			}
		}
		out[k] = stddev(means)
	}
	return out
}

func stddev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return math.Sqrt(v / float64(len(xs)-1))
}

// LOO is leave-one-space-out selection among candidate strategies (the
// same strategy under several hyperparameters): for each space, the
// candidate with the best mean over the other spaces (the mean of its
// fractions at every k), and that candidate's score on the held-out space.
type LOO struct {
	// Chosen names, per held-out space, the candidate chosen without it.
	Chosen map[string]string `json:"chosen"`
	// Mean is the mean over spaces of the held-out scores: what the
	// selection scores on spaces it never saw.
	Mean map[int]float64 `json:"mean"`
	// InSample is the candidate chosen on all spaces and its mean: what
	// tuning on the test spaces themselves would report.
	InSample     string          `json:"in_sample"`
	InSampleMean map[int]float64 `json:"in_sample_mean"`
}

// LeaveOneOut selects among the candidates' scores (evolve.Score per space
// and candidate) by leave-one-space-out. Ties go to the candidate first in
// candidates. Spaces lacking a score of some candidate are left out.
func LeaveOneOut(scores []Score, candidates []string, ks []int) LOO {
	at := map[string]map[string]Score{} // space -> candidate -> score
	for _, sc := range scores {
		if !slices.Contains(candidates, sc.Strategy) {
			continue
		}
		if at[sc.Space] == nil {
			at[sc.Space] = map[string]Score{}
		}
		at[sc.Space][sc.Strategy] = sc
	}
	var spaces []string
	for s, m := range at {
		if len(m) == len(candidates) {
			spaces = append(spaces, s)
		}
	}
	slices.Sort(spaces)
	overall := func(sc Score) float64 {
		v := 0.0
		for _, k := range ks {
			v += sc.At[k]
		}
		return v / float64(len(ks))
	}
	choose := func(skip string) string {
		best, bestV := "", math.Inf(-1)
		for _, c := range candidates {
			v := 0.0
			for _, s := range spaces {
				if s != skip {
					v += overall(at[s][c])
				}
			}
			if v > bestV {
				best, bestV = c, v
			}
		}
		return best
	}
	out := LOO{Chosen: map[string]string{}, Mean: map[int]float64{}, InSampleMean: map[int]float64{}}
	if len(spaces) == 0 {
		return out
	}
	out.InSample = choose("")
	for _, s := range spaces {
		c := choose(s)
		out.Chosen[s] = c
		for _, k := range ks {
			out.Mean[k] += at[s][c].At[k] / float64(len(spaces))
			out.InSampleMean[k] += at[s][out.InSample].At[k] / float64(len(spaces))
		}
	}
	return out
}
