package report

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/quasim/quasim/api"
)

// valid reports whether a trial measured a usable time.
func valid(t api.Trial) bool {
	return t.Status == "ok" && t.TimeMS > 0 && !math.IsInf(t.TimeMS, 0) && !math.IsNaN(t.TimeMS)
}

// step is the best valid time after Evals evaluations.
type step struct {
	Evals  int
	BestMS float64
	Key    string
}

// convergence is a job's best-so-far time against evaluations.
type convergence struct {
	n       int     // evaluations (trials, failed ones included)
	valid   int     // of which valid
	steps   []step  // one per improvement, in order
	bestMS  float64 // best known: the smallest valid time
	bestKey string
	// cycleStart maps a cycle id to the evaluation (1-based) of its first
	// trial.
	cycleStart map[int]int
	// firstAt maps a key to the evaluation (1-based) that first measured it.
	firstAt map[string]int
}

func convergenceOf(trials []api.Trial) convergence {
	c := convergence{n: len(trials), cycleStart: map[int]int{}, firstAt: map[string]int{}}
	for i, t := range trials {
		if _, ok := c.firstAt[t.Key]; !ok {
			c.firstAt[t.Key] = i + 1
		}
		if t.Cycle != 0 {
			if _, ok := c.cycleStart[t.Cycle]; !ok {
				c.cycleStart[t.Cycle] = i + 1
			}
		}
		if !valid(t) {
			continue
		}
		c.valid++
		if c.bestMS == 0 || t.TimeMS < c.bestMS {
			c.bestMS, c.bestKey = t.TimeMS, t.Key
			c.steps = append(c.steps, step{Evals: i + 1, BestMS: t.TimeMS, Key: t.Key})
		}
	}
	return c
}

// fraction is best known / best after k evaluations (0 before any valid
// trial), the metric of the search benchmark.
func (c convergence) fraction(k int) float64 {
	best := 0.0
	for _, s := range c.steps {
		if s.Evals > k {
			break
		}
		best = s.BestMS
	}
	if best == 0 {
		return 0
	}
	return c.bestMS / best
}

// evalsTo is the first evaluation at which the fraction reaches f, or 0.
func (c convergence) evalsTo(f float64) int {
	for _, s := range c.steps {
		if c.bestMS/s.BestMS >= f {
			return s.Evals
		}
	}
	return 0
}

// checkpoints are the evaluation counts the fraction is reported at: the
// benchmark's, those within n, and n itself.
func checkpoints(n int) []int {
	var ks []int
	for _, k := range []int{10, 25, 50, 100, 200, 400, 1000, 2000, 5000, 10000, 20000, 50000} {
		if k < n {
			ks = append(ks, k)
		}
	}
	if n > 0 {
		ks = append(ks, n)
	}
	return ks
}

// splitKey splits a config key into one value per parameter, or nil when
// it does not split into len(params) values.
func splitKey(key string, params []string) []string {
	if len(params) == 0 {
		return nil
	}
	v := strings.Split(key, ",")
	if len(v) != len(params) {
		return nil
	}
	for i := range v {
		v[i] = strings.TrimSpace(v[i])
	}
	return v
}

// level is one value of a parameter and the valid times measured with it.
type level struct {
	Value    string
	N        int
	MinMS    float64
	MedianMS float64
	meanLog  float64
}

// effect is one parameter's levels and importance.
type effect struct {
	Param      string
	Levels     []level // in value order
	Importance float64 // η² of log time; see the package doc
}

// effects computes each parameter's per-value times and importance from
// the valid trials whose keys split into the parameters. It returns nil
// when fewer than two such trials exist or their times do not vary.
func effects(trials []api.Trial, params []string) []effect {
	type obs struct {
		vals []string
		x    float64
		ms   float64
	}
	var os []obs
	for _, t := range trials {
		if !valid(t) {
			continue
		}
		v := splitKey(t.Key, params)
		if v == nil {
			continue
		}
		os = append(os, obs{v, math.Log(t.TimeMS), t.TimeMS})
	}
	if len(os) < 2 {
		return nil
	}
	mean := 0.0
	for _, o := range os {
		mean += o.x
	}
	mean /= float64(len(os))
	total := 0.0
	for _, o := range os {
		total += (o.x - mean) * (o.x - mean)
	}
	if total <= 0 {
		return nil
	}
	var out []effect
	for p, name := range params {
		groups := map[string][]obs{}
		for _, o := range os {
			groups[o.vals[p]] = append(groups[o.vals[p]], o)
		}
		e := effect{Param: name}
		between := 0.0
		for v, g := range groups {
			l := level{Value: v, N: len(g)}
			ms := make([]float64, len(g))
			for i, o := range g {
				l.meanLog += o.x
				ms[i] = o.ms
			}
			l.meanLog /= float64(len(g))
			slices.Sort(ms)
			l.MinMS, l.MedianMS = ms[0], median(ms)
			between += float64(len(g)) * (l.meanLog - mean) * (l.meanLog - mean)
			e.Levels = append(e.Levels, l)
		}
		e.Importance = between / total
		slices.SortFunc(e.Levels, func(a, b level) int { return compareValues(a.Value, b.Value) })
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b effect) int { return cmp.Compare(b.Importance, a.Importance) })
	return out
}

// compareValues orders parameter values numerically where both are
// numbers, else as strings.
func compareValues(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	switch {
	case errA == nil && errB == nil:
		return cmp.Compare(x, y)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// point is a valid trial with energy.
type point struct {
	Key      string
	TimeMS   float64
	EnergyMJ float64
}

// paretoFront returns the trials with energy, and those of them that no
// other is at least as fast and as frugal as (strictly better in one), by
// time. A key measured more than once counts once, at its first trial.
func paretoFront(trials []api.Trial) (all, front []point) {
	seen := map[string]bool{}
	for _, t := range trials {
		if !valid(t) || !(t.EnergyMJ > 0) || math.IsInf(t.EnergyMJ, 1) || seen[t.Key] {
			continue
		}
		seen[t.Key] = true
		all = append(all, point{t.Key, t.TimeMS, t.EnergyMJ})
	}
	sorted := slices.Clone(all)
	slices.SortFunc(sorted, func(a, b point) int {
		return cmp.Or(cmp.Compare(a.TimeMS, b.TimeMS), cmp.Compare(a.EnergyMJ, b.EnergyMJ))
	})
	for _, p := range sorted {
		if len(front) == 0 || p.EnergyMJ < front[len(front)-1].EnergyMJ {
			front = append(front, p)
		}
	}
	return all, front
}

// members lists the portfolio members of cycles, those that proposed most
// first.
func members(cycles []api.Cycle) []string {
	total := map[string]int{}
	for _, c := range cycles {
		for m, n := range c.Allocation {
			total[m] += n
		}
	}
	var ms []string
	for m := range total {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b string) int { return cmp.Or(cmp.Compare(total[b], total[a]), strings.Compare(a, b)) })
	return ms
}
