package tuner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
)

// Job is what a cycle tunes: one kernel at one problem size on one device.
type Job struct {
	Kernel    string
	Problem   evaluate.Problem
	Evaluator evaluate.Evaluator
}

// Config wires a Tuner.
type Config struct {
	// NewStrategy makes the search strategy of a cycle.
	NewStrategy func(space *genome.Space, seed uint64) evolve.Strategy
	// Budget is the number of evaluations per cycle.
	Budget int
	// MaxTime ends a cycle early; zero means no limit.
	MaxTime time.Duration
	Log     zerolog.Logger
	Now     func() time.Time
}

// Tuner runs cycles.
type Tuner struct{ cfg Config }

// New returns a Tuner; it panics on a missing dependency.
func New(cfg Config) *Tuner {
	if cfg.NewStrategy == nil {
		panic("tuner: nil NewStrategy")
	}
	if cfg.Budget <= 0 {
		panic("tuner: non-positive Budget")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Tuner{cfg: cfg}
}

// Result is the outcome of a cycle.
type Result struct {
	Default evaluate.Trial   // the space's default config, measured first
	Best    evaluate.Trial   // the fastest valid trial
	Trials  []evaluate.Trial // every trial, in order
}

// Speedup is the default's time over the best's; 0 when either failed.
func (r Result) Speedup() float64 {
	if !r.Default.OK() || !r.Best.OK() {
		return 0
	}
	return r.Default.Time / r.Best.Time
}

// Cycle tunes job until the budget or MaxTime is spent or ctx is done. A
// cancelled cycle returns what it measured so far with ctx's error.
func (t *Tuner) Cycle(ctx context.Context, job Job, seed uint64) (Result, error) {
	log := t.cfg.Log.With().Str("kernel", job.Kernel).Str("problem", job.Problem.String()).Logger()
	space, err := job.Evaluator.Space(job.Problem)
	if err != nil {
		return Result{}, fmt.Errorf("space of %s: %w", job.Kernel, err)
	}
	start := t.cfg.Now()
	var res Result
	measure := func(c genome.Config) (evaluate.Trial, error) {
		tr, err := job.Evaluator.Evaluate(ctx, c, job.Problem)
		if err != nil {
			return tr, err
		}
		res.Trials = append(res.Trials, tr)
		if tr.OK() && (!res.Best.OK() || tr.Time < res.Best.Time) {
			res.Best = tr
			log.Debug().Str("config", tr.Key).Float64("time_ms", tr.Time).Int("evals", len(res.Trials)).Msg("new best")
		}
		return tr, nil
	}
	strat := t.cfg.NewStrategy(space, seed)
	def := space.Default()
	if space.Valid(def) {
		tr, err := measure(def)
		if err != nil {
			return res, err
		}
		res.Default = tr
		if err := strat.Tell([]evolve.Result{{Config: def, OK: tr.OK(), Value: tr.Time}}); err != nil {
			return res, err
		}
	}
	for len(res.Trials) < t.cfg.Budget {
		if t.cfg.MaxTime > 0 && t.cfg.Now().Sub(start) >= t.cfg.MaxTime {
			break
		}
		cfgs, err := strat.Ask(1)
		if err != nil {
			return res, fmt.Errorf("%s ask: %w", strat.Name(), err)
		}
		if len(cfgs) == 0 {
			break // space exhausted
		}
		tr, err := measure(cfgs[0])
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return res, err
			}
			return res, fmt.Errorf("evaluate %s: %w", space.Key(cfgs[0]), err)
		}
		if err := strat.Tell([]evolve.Result{{Config: cfgs[0], OK: tr.OK(), Value: tr.Time}}); err != nil {
			return res, err
		}
	}
	return res, nil
}
