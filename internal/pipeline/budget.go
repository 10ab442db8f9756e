package pipeline

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/quasim/quasim/causal"
)

// PriorHeadroom is the headroom assumed for a job whose default or best
// time is not known yet: tuning usually buys something, and the same
// guess for every such job leaves the order to influence.
const PriorHeadroom = 0.5

// Headroom is the share of a job's time tuning may gain: its default's
// time against the best known, 1 - best/default, or PriorHeadroom when
// either is unknown (zero or negative).
func Headroom(defaultMS, bestMS float64) float64 {
	if defaultMS <= 0 || bestMS <= 0 {
		return PriorHeadroom
	}
	return min(1, max(0, 1-bestMS/defaultMS))
}

// Candidate is a job waiting for tuning.
type Candidate struct {
	Job       string
	Influence float64 // the model's influence of the job's launches (negative counts as 0)
	Headroom  float64 // in [0, 1]
	// Min is the fewest evaluations the job gets, taken from the largest
	// shares: a job with nothing tuned yet gets a first small cycle even
	// when its gain rounds to nothing.
	Min int
}

// Share is a candidate's part of a shared budget.
type Share struct {
	Job       string  `json:"job"`
	Influence float64 `json:"influence"`
	Headroom  float64 `json:"headroom"`
	Gain      float64 `json:"gain"` // expected end-to-end gain: influence × headroom
	Evals     int     `json:"evals"`
	Raised    bool    `json:"raised,omitempty"` // raised to the candidate's Min
}

// Split orders candidates by expected end-to-end gain, largest first (ties
// by job), and divides total evaluations among them in proportion to it,
// by largest remainder. With no positive gain anywhere it splits evenly
// (nothing tells the jobs apart). A job whose share rounds below its Min
// is raised to it (while total allows), from the largest shares; one left
// at 0 is not tuned this time.
func Split(cands []Candidate, total int) []Share {
	out := make([]Share, len(cands))
	sum := 0.0
	for i, c := range cands {
		g := max(0, c.Influence) * min(1, max(0, c.Headroom))
		if math.IsNaN(g) {
			g = 0
		}
		out[i] = Share{Job: c.Job, Influence: c.Influence, Headroom: c.Headroom, Gain: g}
		sum += g
	}
	slices.SortStableFunc(out, func(a, b Share) int {
		if c := cmp.Compare(b.Gain, a.Gain); c != 0 {
			return c
		}
		return cmp.Compare(a.Job, b.Job)
	})
	if len(out) == 0 || total <= 0 {
		return out
	}
	weight := func(s Share) float64 {
		if sum <= 0 {
			return 1 / float64(len(out))
		}
		return s.Gain / sum
	}
	given := 0
	rem := make([]float64, len(out))
	for i := range out {
		exact := weight(out[i]) * float64(total)
		out[i].Evals = int(math.Floor(exact))
		rem[i] = exact - float64(out[i].Evals)
		given += out[i].Evals
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(rem[b], rem[a]) })
	for k := 0; given < total; k++ {
		out[idx[k%len(idx)]].Evals++
		given++
	}
	raiseToMin(out, cands)
	return out
}

// raiseToMin gives each share below its candidate's Min one evaluation at
// a time from the share with the most above its own Min.
func raiseToMin(out []Share, cands []Candidate) {
	minOf := make(map[string]int, len(cands))
	for _, c := range cands {
		minOf[c.Job] = max(0, c.Min)
	}
	for i := range out {
		for out[i].Evals < minOf[out[i].Job] {
			from, spare := -1, 0
			for j := range out {
				if s := out[j].Evals - minOf[out[j].Job]; j != i && s > spare {
					from, spare = j, s
				}
			}
			if from < 0 {
				break // nothing to spare: total is below the sum of the Mins
			}
			out[from].Evals--
			out[i].Evals++
			out[i].Raised = true
		}
	}
}

// Influences is the model's influence of each (kernel, problem) of a
// pipeline's iterations (each one graph): the end-to-end speedup when its
// launches are causal.CurveStep faster, per unit of that speedup, as
// causal's Influence is per kernel, taken per iteration and the median
// over iterations. Keys are kernel + "|" + problem.
func Influences(iters [][]causal.Span) (map[string]float64, error) {
	per := map[string][]float64{}
	for _, it := range iters {
		g, err := causal.Build(it)
		if err != nil {
			return nil, fmt.Errorf("iteration %d: %w", it[0].Iteration, err)
		}
		base := g.EndToEnd()
		if base <= 0 {
			continue
		}
		seen := map[string]bool{}
		for _, s := range it {
			k := s.Kernel + "|" + s.Problem
			if seen[k] {
				continue
			}
			seen[k] = true
			t, err := g.Simulate(causal.Change{Kernel: s.Kernel, Problem: s.Problem, Scale: 1 - causal.CurveStep})
			if err != nil {
				return nil, err
			}
			per[k] = append(per[k], float64(base-t)/float64(base)/causal.CurveStep)
		}
	}
	out := make(map[string]float64, len(per))
	for k, v := range per {
		slices.Sort(v)
		n := len(v)
		out[k] = (v[(n-1)/2] + v[n/2]) / 2
	}
	return out, nil
}
