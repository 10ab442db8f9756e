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
	seeds, means := seedMeans(runs, optimum, ks)
	out := map[int]float64{}
	for _, k := range ks {
		xs := make([]float64, len(seeds))
		for i, seed := range seeds {
			xs[i] = means[seed][k]
		}
		out[k] = stddev(xs)
	}
	return out
}

// seedMeans returns, per seed run on every space (in order) and k, the
// mean fraction over the spaces.
func seedMeans(runs []BenchRun, optimum func(space string) float64, ks []int) ([]uint64, map[uint64]map[int]float64) {
	sum, n := map[uint64]map[int]float64{}, map[uint64]int{}
	spaces := map[string]bool{}
	for _, r := range runs {
		spaces[r.Space] = true
		fr := Fractions(r.Trace, optimum(r.Space))
		if sum[r.Seed] == nil {
			sum[r.Seed] = map[int]float64{}
		}
		for _, k := range ks {
			sum[r.Seed][k] += FractionAt(fr, k)
		}
		n[r.Seed]++
	}
	// Seeds in order, so that sums over them, and the bits of the result,
	// do not depend on map order (bench and bench score must agree
	// exactly).
	var seeds []uint64
	for seed, c := range n {
		if c == len(spaces) {
			seeds = append(seeds, seed)
			for _, k := range ks {
				sum[seed][k] /= float64(c)
			}
		}
	}
	slices.Sort(seeds)
	return seeds, sum
}

// Paired compares two strategies seed by seed: the difference of a seed's
// mean over the spaces, a's minus b's. Runs of one seed start from the
// same random stream, so pairing takes out what the seed gives both.
type Paired struct {
	Seeds int             `json:"seeds"` // seeds run on every space by both
	Diff  map[int]float64 `json:"diff"`  // mean of the per-seed differences
	SD    map[int]float64 `json:"sd"`    // their standard deviation over seeds
	Wins  map[int]int     `json:"wins"`  // seeds on which a's mean is higher
}

// PairedDiff pairs a's and b's runs (each on every space) by seed.
func PairedDiff(a, b []BenchRun, optimum func(space string) float64, ks []int) Paired {
	sa, ma := seedMeans(a, optimum, ks)
	_, mb := seedMeans(b, optimum, ks)
	var seeds []uint64
	for _, s := range sa {
		if _, ok := mb[s]; ok {
			seeds = append(seeds, s)
		}
	}
	out := Paired{Seeds: len(seeds), Diff: map[int]float64{}, SD: map[int]float64{}, Wins: map[int]int{}}
	for _, k := range ks {
		d := make([]float64, len(seeds))
		for i, s := range seeds {
			d[i] = ma[s][k] - mb[s][k]
			out.Diff[k] += d[i] / float64(len(seeds))
			if d[i] > 0 {
				out.Wins[k]++
			}
		}
		out.SD[k] = stddev(d)
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

// LOO is leave-one-group-out selection among candidate strategies (the
// same strategy under several hyperparameters): for each space, the
// candidate with the best mean over the spaces outside its group (the mean
// of its fractions at every k), and that candidate's score on the held-out
// space. A group is one space (leave one space out) or, so that a held-out
// space never has a sibling in training, every space of one kernel.
type LOO struct {
	// Chosen names, per held-out space, the candidate chosen without its
	// group.
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
// and candidate) by leave-one-group-out; group names each space's group
// (nil: each space is its own). Ties go to the candidate first in
// candidates. Spaces lacking a score of some candidate are left out.
func LeaveOneOut(scores []Score, candidates []string, ks []int, group func(space string) string) LOO {
	if group == nil {
		group = func(s string) string { return s }
	}
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
				if skip == "" || group(s) != skip {
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
		c := choose(group(s))
		out.Chosen[s] = c
		for _, k := range ks {
			out.Mean[k] += at[s][c].At[k] / float64(len(spaces))
			out.InSampleMean[k] += at[s][out.InSample].At[k] / float64(len(spaces))
		}
	}
	return out
}
