package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/tuner"
)

// Config is quasimd's configuration.
type Config struct {
	Budget   int           // evaluations per job and cycle
	MaxTime  time.Duration // wall-time cap per job and cycle
	Interval time.Duration // time between cycles
	Once     bool          // run one cycle and return
	Kernels  []string      // builtin kernels to tune; empty means all
	Seed     uint64
}

// Validate checks cfg once, before anything starts.
func (c Config) Validate() error {
	if c.Budget <= 0 {
		return fmt.Errorf("budget %d: must be positive", c.Budget)
	}
	if c.Interval <= 0 && !c.Once {
		return fmt.Errorf("interval %s: must be positive", c.Interval)
	}
	known := builtin.Kernels()
	for _, k := range c.Kernels {
		if _, err := builtin.New(k, builtin.Options{}); err != nil {
			return fmt.Errorf("kernel %q: not a builtin kernel (have %v)", k, known)
		}
	}
	return nil
}

// Run tunes until ctx is done (or after one cycle with Once). Cancellation
// is the normal way to stop and returns nil.
func Run(ctx context.Context, cfg Config, log zerolog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	names := cfg.Kernels
	if len(names) == 0 {
		names = builtin.Kernels()
	}
	var jobs []tuner.Job
	for _, n := range names {
		k, err := builtin.New(n, builtin.Options{})
		if err != nil {
			return err
		}
		for _, p := range k.DefaultProblems() {
			jobs = append(jobs, tuner.Job{Kernel: n, Problem: p, Evaluator: k})
		}
	}
	tn := tuner.New(tuner.Config{
		NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewES(s, seed, evolve.ESOptions{}) },
		Budget:      cfg.Budget,
		MaxTime:     cfg.MaxTime,
		Log:         log.With().Str("component", "tuner").Logger(),
	})
	log.Info().Int("jobs", len(jobs)).Int("budget", cfg.Budget).Msg("quasimd started")
	for cycle := uint64(0); ; cycle++ {
		for _, j := range jobs {
			start := time.Now()
			res, err := tn.Cycle(ctx, j, cfg.Seed+cycle)
			if errors.Is(err, context.Canceled) {
				log.Info().Msg("quasimd stopping")
				return nil
			}
			if err != nil {
				return fmt.Errorf("tune %s %s: %w", j.Kernel, j.Problem, err)
			}
			log.Info().Str("kernel", j.Kernel).Str("problem", j.Problem.String()).
				Str("config", res.Best.Key).Float64("best_ms", res.Best.Time).
				Float64("default_ms", res.Default.Time).Float64("speedup", res.Speedup()).
				Int("evals", len(res.Trials)).Dur("dur", time.Since(start)).Msg("job tuned")
		}
		if cfg.Once {
			return nil
		}
		select {
		case <-ctx.Done():
			log.Info().Msg("quasimd stopping")
			return nil
		case <-time.After(cfg.Interval):
		}
	}
}
