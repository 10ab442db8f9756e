package evolve

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/quasim/quasim/genome"
)

// Measurement is what a recorded space holds for one config.
type Measurement struct {
	Key    string  `json:"key"`
	Status string  `json:"status"`
	Time   float64 `json:"time_ms"` // valid time in ms; 0 when not OK
	OK     bool    `json:"-"`
	Cost   float64 `json:"-"`            // simulated seconds it took to measure
	By     string  `json:"by,omitempty"` // the portfolio member that proposed it
	// True, under RunOptions.Noise, is the recorded mean time while Time
	// is the one repetition the strategy was shown; 0 otherwise.
	True float64 `json:"true_ms,omitempty"`
	// Times are the recorded repetitions Noise draws from.
	Times []float64 `json:"-"`
}

// truth is m's recorded mean time, whatever the strategy was shown.
func (m Measurement) truth() float64 {
	if m.True > 0 {
		return m.True
	}
	return m.Time
}

// BenchSpace is a recorded space a strategy can be replayed on.
type BenchSpace struct {
	Name    string
	Space   *genome.Space
	Measure func(genome.Config) (Measurement, error)
	// Prefetch, when set, is told each batch of more than one config before
	// its first is measured, as the tuner tells a Prefetcher.
	Prefetch func([]genome.Config)
	Optimum  float64 // smallest valid time in the recording
	Size     int     // number of recorded configs, valid or failed
	Valid    []float64
}

// Factory makes a fresh strategy for a space and seed.
type Factory func(space *genome.Space, seed uint64) Strategy

// RunOptions controls one benchmark run.
type RunOptions struct {
	Budget int // unique evaluations
	Batch  int // configs per Ask (default 1)
	// RoundTripAt, when positive, marshals the strategy at the first batch
	// boundary at or after that many evaluations and continues on a fresh
	// one restored from the bytes, as a stopped and resumed cycle would.
	RoundTripAt int
	// Clock times Ask and Tell for the overhead figure; nil reports none.
	Clock func() time.Time
	// Noise shows the strategy, for each valid config, one of its recorded
	// repetition times (Measurement.Times) instead of their mean, drawn by
	// the run's seed and the config's key: a noisy measurement, as a tuner
	// that times one run would see. Scores stay on the recorded means.
	Noise bool
}

// BenchRun is one strategy's run on one space with one seed.
type BenchRun struct {
	Space    string        `json:"space"`
	Strategy string        `json:"strategy"`
	Seed     uint64        `json:"seed"`
	Trace    []Measurement `json:"-"`
	Overhead time.Duration `json:"-"` // total time spent in Ask and Tell
}

// Allocator is a strategy that hands evaluations to other strategies, such
// as Portfolio.
type Allocator interface {
	// Allocation is how many evaluations each member was given so far.
	Allocation() map[string]int
	// ProposedBy names the member that proposed c, asked and not yet told.
	ProposedBy(c genome.Config) string
}

// Run replays strategy f on bs for opt.Budget unique evaluations.
func Run(ctx context.Context, bs BenchSpace, f Factory, seed uint64, opt RunOptions) (BenchRun, error) {
	if opt.Batch <= 0 {
		opt.Batch = 1
	}
	clock := opt.Clock
	if clock == nil {
		t := time.Time{}
		clock = func() time.Time { return t }
	}
	s := f(bs.Space, seed)
	run := BenchRun{Space: bs.Name, Strategy: s.Name(), Seed: seed}
	tripped := opt.RoundTripAt <= 0
	for len(run.Trace) < opt.Budget {
		if err := ctx.Err(); err != nil {
			return run, err
		}
		if !tripped && len(run.Trace) >= opt.RoundTripAt {
			tripped = true
			b, err := s.MarshalBinary()
			if err != nil {
				return run, fmt.Errorf("marshal %s: %w", s.Name(), err)
			}
			// A different seed proves the state, not the seed, drives the rest.
			s = f(bs.Space, seed+0x5bd1e995)
			if err := s.UnmarshalBinary(b); err != nil {
				return run, fmt.Errorf("unmarshal %s: %w", s.Name(), err)
			}
		}
		n := min(opt.Batch, opt.Budget-len(run.Trace))
		t0 := clock()
		cfgs, err := s.Ask(n)
		run.Overhead += clock().Sub(t0)
		if err != nil {
			return run, fmt.Errorf("%s ask: %w", s.Name(), err)
		}
		if len(cfgs) == 0 {
			break // space exhausted
		}
		if bs.Prefetch != nil && len(cfgs) > 1 {
			bs.Prefetch(cfgs)
		}
		results := make([]Result, len(cfgs))
		for i, c := range cfgs {
			m, err := bs.Measure(c)
			if err != nil {
				return run, fmt.Errorf("%s proposed %v: %w", s.Name(), []int(c), err)
			}
			if a, ok := s.(Allocator); ok {
				m.By = a.ProposedBy(c)
			}
			if opt.Noise && m.OK && len(m.Times) > 0 {
				m.True, m.Time = m.Time, m.Times[noiseDraw(seed, m.Key, len(m.Times))]
			}
			run.Trace = append(run.Trace, m)
			results[i] = Result{Config: c, OK: m.OK, Value: m.Time}
		}
		t0 = clock()
		err = s.Tell(results)
		run.Overhead += clock().Sub(t0)
		if err != nil {
			return run, fmt.Errorf("%s tell: %w", s.Name(), err)
		}
	}
	return run, nil
}

// Score summarises runs of one strategy on one space.
type Score struct {
	Space    string          `json:"space"`
	Strategy string          `json:"strategy"`
	Runs     int             `json:"runs"`
	At       map[int]float64 `json:"fraction_at"` // mean fraction of the optimum after k evaluations
	// EvalsTo95 is the median number of evaluations to reach 0.95 of the
	// optimum; nil when half the runs or more never did.
	EvalsTo95 *float64 `json:"evals_to_95"`
	// SimSecondsTo95 is the median simulated tuning time to reach 0.95.
	SimSecondsTo95 *float64 `json:"sim_seconds_to_95"`
	OverheadUS     float64  `json:"overhead_us_per_eval"`
	// Allocation is, for an Allocator, the mean share of the evaluations
	// after k' and up to k that each member was given, where k' is the
	// previous of ks (0 for the first): how the split moved over the runs.
	Allocation map[int]map[string]float64 `json:"allocation,omitempty"`
	// Follow is, for an Allocator, the share of the FollowWindow
	// evaluations after a member's new best that went to that member:
	// about 1/members for an allocation blind to who is improving.
	Follow float64 `json:"follow,omitempty"`
}

// FollowWindow is how many evaluations after a new best Score.Follow counts.
const FollowWindow = 5

// Ks are the evaluation counts the metric reports.
var Ks = []int{25, 50, 100, 200, 400}

// Fractions returns, after each evaluation of a trace, optimum / the
// recorded time of the config with the best time the strategy was shown
// (0 while none is valid): under noise, the config a tuner would serve,
// judged by what it really takes.
func Fractions(trace []Measurement, optimum float64) []float64 {
	out := make([]float64, len(trace))
	best := math.Inf(1)
	truth := 0.0
	for i, m := range trace {
		if m.OK && m.Time < best {
			best, truth = m.Time, m.truth()
		}
		if !math.IsInf(best, 1) {
			out[i] = optimum / truth
		}
	}
	return out
}

// noiseDraw picks one of n repetitions of key for a run's seed: FNV-1a of
// the key, mixed with the seed (splitmix64's finaliser).
func noiseDraw(seed uint64, key string, n int) int {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	h ^= seed + 0x9e3779b97f4a7c15
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9
	h = (h ^ (h >> 27)) * 0x94d049bb133111eb
	h ^= h >> 31
	return int(h % uint64(n))
}

// FractionAt is fraction(k) of a run; a run that ended early (the space ran
// out) carries its final best forward.
func FractionAt(fr []float64, k int) float64 {
	if len(fr) == 0 || k <= 0 {
		return 0
	}
	if k > len(fr) {
		k = len(fr)
	}
	return fr[k-1]
}

// ScoreRuns computes the benchmark metric of ARCHITECTURE.md.
func ScoreRuns(space, strategy string, runs []BenchRun, optimum float64, ks []int) Score {
	sc := Score{Space: space, Strategy: strategy, Runs: len(runs), At: map[int]float64{}}
	if len(runs) == 0 {
		return sc
	}
	to95 := make([]float64, len(runs))
	sim95 := make([]float64, len(runs))
	var over time.Duration
	evals := 0
	for i, r := range runs {
		fr := Fractions(r.Trace, optimum)
		for _, k := range ks {
			sc.At[k] += FractionAt(fr, k) / float64(len(runs))
		}
		to95[i], sim95[i] = math.Inf(1), math.Inf(1)
		cost := 0.0
		for j, f := range fr {
			cost += r.Trace[j].Cost
			if f >= 0.95 {
				to95[i], sim95[i] = float64(j+1), cost
				break
			}
		}
		over += r.Overhead
		evals += len(r.Trace)
	}
	sc.Allocation = allocationShares(runs, ks)
	sc.Follow = followShare(runs)
	sc.EvalsTo95 = median(to95)
	sc.SimSecondsTo95 = median(sim95)
	if evals > 0 {
		sc.OverheadUS = float64(over.Nanoseconds()) / 1e3 / float64(evals)
	}
	return sc
}

// median of xs, nil when it is infinite (half or more never got there).
func median(xs []float64) *float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	var m float64
	if n%2 == 1 {
		m = s[n/2]
	} else {
		m = (s[n/2-1] + s[n/2]) / 2
	}
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return nil
	}
	return &m
}

// RandomExpectation is the exact expected fraction(k) of uniform random
// sampling without replacement from a space of n configs whose valid times
// are valid (failed configs make up the rest). It checks that the harness is
// honest: a measured random search must land near it.
func RandomExpectation(valid []float64, n, k int) float64 {
	if len(valid) == 0 || k <= 0 || n <= 0 {
		return 0
	}
	k = min(k, n)
	t := slices.Clone(valid)
	slices.Sort(t)
	opt := t[0]
	// r(m) = C(n-m, k) / C(n, k): the chance that k draws all miss m given configs.
	r := 1.0
	e := 0.0
	for m := 0; m < len(t); m++ {
		next := 0.0
		if n-m-k > 0 {
			next = r * float64(n-m-k) / float64(n-m)
		}
		// P(best valid drawn is the (m+1)-th) = r(m) - r(m+1).
		e += (r - next) * opt / t[m]
		r = next
		if r == 0 {
			break
		}
	}
	return e
}

// Mean averages scores over spaces, one per space, for one strategy.
// EvalsTo95 and SimSecondsTo95 are means over spaces, nil if any is nil.
func Mean(strategy string, scores []Score, ks []int) Score {
	m := Score{Space: "mean", Strategy: strategy, At: map[int]float64{}}
	if len(scores) == 0 {
		return m
	}
	var to, sim, over float64
	toOK, simOK := true, true
	for _, s := range scores {
		for _, k := range ks {
			m.At[k] += s.At[k] / float64(len(scores))
		}
		if s.EvalsTo95 == nil {
			toOK = false
		} else {
			to += *s.EvalsTo95
		}
		if s.SimSecondsTo95 == nil {
			simOK = false
		} else {
			sim += *s.SimSecondsTo95
		}
		over += s.OverheadUS
		m.Runs += s.Runs
		m.Follow += s.Follow / float64(len(scores))
		for k, shares := range s.Allocation {
			if m.Allocation == nil {
				m.Allocation = map[int]map[string]float64{}
			}
			if m.Allocation[k] == nil {
				m.Allocation[k] = map[string]float64{}
			}
			for name, v := range shares {
				m.Allocation[k][name] += v / float64(len(scores))
			}
		}
	}
	n := float64(len(scores))
	if toOK {
		v := to / n
		m.EvalsTo95 = &v
	}
	if simOK {
		v := sim / n
		m.SimSecondsTo95 = &v
	}
	m.OverheadUS = over / n
	return m
}

// allocationShares is the mean share of each proposer among the
// evaluations in each window of ks; nil when no run names proposers.
// followShare is Score.Follow over runs: after each new best a member
// proposed, the share of the next FollowWindow evaluations given to it.
func followShare(runs []BenchRun) float64 {
	hits, n := 0, 0
	for _, r := range runs {
		best := math.Inf(1)
		for i, m := range r.Trace {
			if !m.OK || m.Time >= best {
				continue
			}
			best = m.Time
			if m.By == "" || m.By == DesignName || m.By == WarmName {
				continue
			}
			for _, next := range r.Trace[i+1 : min(i+1+FollowWindow, len(r.Trace))] {
				if next.By == m.By {
					hits++
				}
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(hits) / float64(n)
}

func allocationShares(runs []BenchRun, ks []int) map[int]map[string]float64 {
	out := map[int]map[string]float64{}
	for _, r := range runs {
		lo := 0
		for _, k := range ks {
			hi := min(k, len(r.Trace))
			if hi <= lo {
				break
			}
			n := 0
			counts := map[string]int{}
			for _, m := range r.Trace[lo:hi] {
				if m.By != "" {
					counts[m.By]++
					n++
				}
			}
			if n > 0 {
				if out[k] == nil {
					out[k] = map[string]float64{}
				}
				for name, c := range counts {
					out[k][name] += float64(c) / float64(hi-lo) / float64(len(runs))
				}
			}
			lo = hi
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
