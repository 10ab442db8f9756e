package evaluate

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/quasim/quasim/genome"
)

// Refresher is implemented by evaluators that measure in a process of
// their own (an OpenCL worker). On some devices a config's time moves
// with the process that measures it, not only from run to run: on pocl,
// on two shared CPU cores, one Xgemm config took 0.44 ms in one process
// and 0.47 to 0.97 ms in six others. The best of a search is then often
// the config that drew a lucky process. Fresh starts another process with
// the same kernel and settings, so that the best few can be measured
// again in processes of their own (Confirm). The caller calls done.
type Refresher interface {
	Fresh(ctx context.Context, p Problem) (ev Evaluator, done func(), err error)
}

// How many of a search's best configs are measured again (Confirm), and
// in how many fresh processes each, by default (quasimd and quasimctl
// bench live).
const (
	DefaultFinalists     = 3
	DefaultConfirmRounds = 3
)

// Finalist is one of a search's best configs, measured again.
type Finalist struct {
	Config  genome.Config `json:"-"`
	Key     string        `json:"key"`
	TimesMS []float64     `json:"times_ms"`         // the search's time first, then one a fresh process that ran it
	Failed  int           `json:"failed,omitempty"` // fresh processes where it did not run (crash, timeout, error)
	// MedianMS is the median of TimesMS with each failure as +Inf: what
	// Confirm ranks by; 0 when that is +Inf (failures reach the middle).
	MedianMS float64 `json:"median_ms"`
}

// rank is f's median with its failures as +Inf.
func (f Finalist) rank() float64 {
	x := slices.Clone(f.TimesMS)
	for range f.Failed {
		x = append(x, math.Inf(1))
	}
	return Median(x)
}

// Confirm measures each finalist (TimesMS holding its time in the search)
// once in each of rounds fresh processes of r, the order turned by one
// each round so that no config always runs first, and returns them best
// first by the median of their times, the search's included; a tie keeps
// the order given. A run that fails counts as +Inf: a config that crashes
// or times out in a fresh process ranks behind one that does not. around,
// when set, is called before each measurement and what it returns after
// it (the tuner holds the device and applies its settings there). On an
// error (a cancelled ctx, a process that does not start) Confirm returns
// the error and nothing else.
func Confirm(ctx context.Context, r Refresher, p Problem, finalists []Finalist, rounds int,
	around func(genome.Config) (func(), error)) ([]Finalist, error) {
	out := make([]Finalist, len(finalists))
	for i, f := range finalists {
		out[i] = f
		out[i].TimesMS = slices.Clone(f.TimesMS)
	}
	for round := range rounds {
		if err := confirmRound(ctx, r, p, out, round, around); err != nil {
			return nil, err
		}
	}
	ranks := map[string]float64{}
	for _, f := range out {
		ranks[f.Key] = f.rank()
	}
	slices.SortStableFunc(out, func(a, b Finalist) int { return cmp.Compare(ranks[a.Key], ranks[b.Key]) })
	for i := range out {
		if m := ranks[out[i].Key]; !math.IsInf(m, 1) {
			out[i].MedianMS = m
		}
	}
	return out, nil
}

// confirmRound measures every finalist in one fresh process, starting at
// finalist round mod n, and appends each time.
func confirmRound(ctx context.Context, r Refresher, p Problem, out []Finalist, round int,
	around func(genome.Config) (func(), error)) error {
	if len(out) == 0 {
		return nil
	}
	ev, done, err := r.Fresh(ctx, p)
	if err != nil {
		return err
	}
	defer done()
	for j := range out {
		f := &out[(round+j)%len(out)]
		restore := func() {}
		if around != nil {
			if restore, err = around(f.Config); err != nil {
				return err
			}
		}
		tr, err := ev.Evaluate(ctx, f.Config, p)
		restore()
		if err != nil {
			return err
		}
		// A time that cannot be (a broken device or worker) never makes a
		// config fastest: it counts as a failure.
		if tr.OK() && tr.Time > 0 && !math.IsInf(tr.Time, 1) {
			f.TimesMS = append(f.TimesMS, tr.Time)
		} else {
			f.Failed++
		}
	}
	return nil
}
