package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/genome"
)

// Config wires a Runner.
type Config struct {
	Pipeline Pipeline
	// Clock is a monotonic clock in ns (required): spans are stamped with it.
	Clock func() int64
	// Seed seeds the kernels' input data (default 1).
	Seed uint64
}

// stage is a Stage made ready to run.
type stage struct {
	Stage
	kern    *builtin.Kernel
	problem evaluate.Problem
	space   *genome.Space
	config  genome.Config
	in      builtin.Inputs
}

// Runner runs iterations of one pipeline. It is not safe for concurrent
// use: one iteration at a time.
type Runner struct {
	pl     Pipeline
	clock  func() int64
	stages []*stage
	// configs caches parsed perturbation configs by stage and key.
	configs map[[2]string]genome.Config
	// noPauses makes a virtual speedup insert its pauses into no stream
	// (tests: to show that the pauses are what its effect measures).
	noPauses bool
}

// New checks the pipeline and makes its kernels and input data.
func New(cfg Config) (*Runner, error) {
	if cfg.Clock == nil {
		panic("pipeline: nil Clock")
	}
	if err := cfg.Pipeline.Validate(); err != nil {
		return nil, err
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	r := &Runner{pl: cfg.Pipeline, clock: cfg.Clock, configs: map[[2]string]genome.Config{}}
	for i, s := range cfg.Pipeline.Stages {
		where := fmt.Sprintf("pipeline %q: stages[%d] (%s)", cfg.Pipeline.Name, i, s.Name)
		k, err := builtin.New(s.Kernel, builtin.Options{Seed: cfg.Seed})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		dims, err := evaluate.ParseDims(s.Problem)
		if err != nil {
			return nil, fmt.Errorf("%s: problem %q: %w", where, s.Problem, err)
		}
		p := evaluate.Problem{Dims: dims}
		sp, err := k.Space(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		c, err := parseConfig(sp, s.Config)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		st := &stage{Stage: s, kern: k, problem: p, space: sp, config: c, in: k.NewInputs(p, cfg.Seed)}
		st.Config = sp.Key(c)
		r.stages = append(r.stages, st)
	}
	return r, nil
}

// parseConfig reads a config key of space sp; "" is the default. The
// config must satisfy the space's constraints.
func parseConfig(sp *genome.Space, key string) (genome.Config, error) {
	if key == "" {
		return sp.Default(), nil
	}
	c, err := sp.ParseKey(key)
	if err != nil {
		return nil, err
	}
	if !sp.Valid(c) {
		return nil, fmt.Errorf("config %q breaks the space's constraints", key)
	}
	return c, nil
}

// Pipeline is the pipeline r runs, with every stage's config key filled in.
func (r *Runner) Pipeline() Pipeline {
	p := Pipeline{Name: r.pl.Name}
	for _, s := range r.stages {
		p.Stages = append(p.Stages, s.Stage)
	}
	return p
}

// SetConfig makes stage name run at config key from now on.
func (r *Runner) SetConfig(name, key string) error {
	i := r.pl.index(name)
	if i < 0 {
		return fmt.Errorf("pipeline %q: no stage %q", r.pl.Name, name)
	}
	s := r.stages[i]
	c, err := parseConfig(s.space, key)
	if err != nil {
		return fmt.Errorf("pipeline %q: stage %q: %w", r.pl.Name, name, err)
	}
	s.config, s.Config = c, s.space.Key(c)
	return nil
}

// configFor is the config stage i runs at under perturbation p.
func (r *Runner) configFor(i int, p *Perturbation) (genome.Config, error) {
	s := r.stages[i]
	if p == nil || p.Config == "" || p.Stage != s.Name {
		return s.config, nil
	}
	k := [2]string{s.Name, p.Config}
	if c, ok := r.configs[k]; ok {
		return c, nil
	}
	c, err := parseConfig(s.space, p.Config)
	if err != nil {
		return nil, fmt.Errorf("perturbation %q: stage %q: %w", p.Name, s.Name, err)
	}
	r.configs[k] = c
	return c, nil
}

// Iteration is one run of the pipeline.
type Iteration struct {
	Spans    []causal.Span
	EndToEnd int64 // ns from the first start to the last end
	// Delayed is how long the perturbation's delay actually waited, ns:
	// at least the delay asked for, more when the sleep woke late.
	Delayed int64
	// Paused is the pause a virtual speedup inserted, ns: f·t for each
	// run of the sped-up stage, which every other stream owes. Coz
	// subtracts it from the end-to-end time to get the effect.
	Paused int64
}

// Run runs iteration it, perturbed by p when p is not nil. Span ids are
// it*len(stages)+index+1, unique across iterations.
//
// A virtual speedup of stage X by f follows Coz: when X's kernel has run
// for t, f·t is added to a global pause count and to the count of X's
// stream; every stream, after each of its kernels (before it signals a
// join or starts its next stage), sleeps what the global count is ahead
// of its own and adds what it slept. A stream woken from a join skips the
// pauses inserted while it waited, as a Coz thread woken by one that paid
// them. Spans end when the kernel ends, before the stream's pause; a pause
// after a stream's last kernel counts in EndToEnd.
func (r *Runner) Run(ctx context.Context, it int, p *Perturbation) (Iteration, error) {
	if p != nil {
		if err := p.check(r.pl); err != nil {
			return Iteration{}, err
		}
	}
	n := len(r.stages)
	configs := make([]genome.Config, n)
	for i := range r.stages {
		c, err := r.configFor(i, p)
		if err != nil {
			return Iteration{}, err
		}
		configs[i] = c
	}
	spans := make([]causal.Span, n)
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	errs := make([]error, n)
	streams := map[string][]int{}
	var order []string
	for i, s := range r.stages {
		if _, ok := streams[s.Stream]; !ok {
			order = append(order, s.Stream)
		}
		streams[s.Stream] = append(streams[s.Stream], i)
	}
	var delayed int64                     // written by the delayed stage's goroutine before wg.Done
	var global atomic.Int64               // the virtual speedup's pauses inserted, ns
	finished := make([]int64, len(order)) // each stream's last kernel's end, or its pause's after it
	var wg sync.WaitGroup
	for k, name := range order {
		wg.Go(func() {
			failed := false
			var paid int64 // pauses this stream has paid or been credited, ns
			for _, i := range streams[name] {
				s := r.stages[i]
				var deps []uint64
				for _, a := range s.After {
					j := r.pl.index(a)
					select {
					case <-done[j]:
					default:
						g := global.Load()
						<-done[j]
						paid += global.Load() - g
					}
					if errs[j] != nil {
						failed = true
					}
					deps = append(deps, uint64(it*n+j+1))
				}
				if failed || ctx.Err() != nil {
					errs[i] = errors.Join(ctx.Err(), errors.New("not run"))
					close(done[i])
					continue
				}
				start := r.clock()
				_, err := s.kern.Run(configs[i], s.problem, s.in)
				if p != nil && p.Delay > 0 && p.Stage == s.Name {
					t := r.clock()
					r.delay(p.Delay)
					delayed = r.clock() - t
				}
				end := r.clock()
				finished[k] = end
				if p != nil && p.Speedup > 0 {
					if p.Stage == s.Name {
						f := int64(math.Round(p.Speedup * float64(end-start)))
						global.Add(f)
						paid += f
					}
					if owed := global.Load() - paid; owed > 0 && !r.noPauses {
						t := r.clock()
						r.delay(time.Duration(owed))
						finished[k] = r.clock()
						paid += finished[k] - t
					}
				}
				spans[i] = causal.Span{ID: uint64(it*n + i + 1), Pipeline: r.pl.Name, Iteration: it, Kernel: s.Kernel,
					Problem: s.Problem, Device: "cpu", Stream: s.Stream, Start: start, End: end, Deps: deps}
				errs[i] = err
				failed = err != nil
				close(done[i])
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Iteration{}, err
	}
	for i, err := range errs {
		if err != nil {
			return Iteration{}, fmt.Errorf("pipeline %q: stage %q: %w", r.pl.Name, r.stages[i].Name, err)
		}
	}
	first, last := spans[0].Start, spans[0].End
	for _, s := range spans {
		first, last = min(first, s.Start), max(last, s.End)
	}
	// A stream's pause after its last kernel holds up the iteration's end,
	// as a Coz thread's pause holds up the join waiting for it.
	for _, f := range finished {
		last = max(last, f)
	}
	return Iteration{Spans: spans, EndToEnd: last - first, Delayed: delayed, Paused: global.Load()}, nil
}

// spinLast is the end of a delay that is waited for busily: sleeping
// that close to the deadline would overshoot it by the timer's slack.
const spinLast = 200 * time.Microsecond

// delay waits d: asleep, as Coz's delays are, so the wait leaves the core
// to the other stream as the model assumes (a busy wait took CPU time
// from it on a loaded 2-core machine), then busily for the last spinLast.
func (r *Runner) delay(d time.Duration) {
	until := r.clock() + int64(d)
	if d > spinLast {
		time.Sleep(d - spinLast)
	}
	for r.clock() < until {
	}
}

// AloneRatio measures stage name alone at config key against its own
// config, one run of each in turn (so the load of a shared machine falls
// on both alike), runs times after one warm-up each, and returns the
// ratio of their medians: how much longer key takes.
func (r *Runner) AloneRatio(ctx context.Context, name, key string, runs int) (float64, error) {
	i := r.pl.index(name)
	if i < 0 {
		return 0, fmt.Errorf("pipeline %q: no stage %q", r.pl.Name, name)
	}
	s := r.stages[i]
	other, err := r.configFor(i, &Perturbation{Name: key, Stage: name, Config: key})
	if err != nil {
		return 0, err
	}
	configs := []genome.Config{s.config, other}
	times := [2][]float64{}
	for k := -1; k < runs; k++ {
		for c, cfg := range configs {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			t0 := r.clock()
			if _, err := s.kern.Run(cfg, s.problem, s.in); err != nil {
				return 0, err
			}
			if k >= 0 { // k = -1 is the warm-up
				times[c] = append(times[c], float64(r.clock()-t0))
			}
		}
	}
	own := evaluate.Median(times[0])
	if own <= 0 {
		own = 1
	}
	return evaluate.Median(times[1]) / own, nil
}

// Since makes a monotonic ns clock from t0 (time.Now() of the caller).
func Since(t0 time.Time) func() int64 {
	return func() int64 { return int64(time.Since(t0)) }
}
