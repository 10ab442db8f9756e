package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/harness"
	"github.com/quasim/quasim/genome"
)

// Exec is the pipeline an exec harness declared in its hello, run by the
// harness (docs/kernel-authors/harness-protocol.md, section 5): a Target for Experiment.
// It is not safe for concurrent use.
type Exec struct {
	h       *harness.Harness
	pl      Pipeline
	spaces  []*genome.Space
	configs []genome.Config
	// next is where the next iteration laid out from stage times starts,
	// after the previous one, as on a clock.
	next int64
}

// NewExec makes the Target of h's declared pipeline, each stage at its
// space's default config.
func NewExec(h *harness.Harness) (*Exec, error) {
	d := h.Pipeline()
	if d == nil {
		return nil, fmt.Errorf("exec harness %s declares no pipeline", h.Hello().Name)
	}
	e := &Exec{h: h, pl: Pipeline{Name: d.Name}}
	for i, s := range d.Stages {
		sp, err := h.StageSpace(i)
		if err != nil {
			return nil, fmt.Errorf("pipeline %q: stages[%d] (%s): %w", d.Name, i, s.Name, err)
		}
		dims := make([]string, len(s.Problem))
		for j, x := range s.Problem {
			dims[j] = strconv.Itoa(x)
		}
		c := sp.Default()
		e.spaces, e.configs = append(e.spaces, sp), append(e.configs, c)
		e.pl.Stages = append(e.pl.Stages, Stage{Name: s.Name, Kernel: h.StageKernel(i), Problem: strings.Join(dims, ","),
			Config: sp.Key(c), Stream: s.Stream, After: s.After})
	}
	if err := e.pl.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// Pipeline implements Target.
func (e *Exec) Pipeline() Pipeline {
	p := Pipeline{Name: e.pl.Name, Stages: append([]Stage(nil), e.pl.Stages...)}
	return p
}

// Tunable reports whether stage i has params to tune.
func (e *Exec) Tunable(i int) bool { return len(e.spaces[i].Params()) > 0 }

// config parses key for stage i: a config of its space that satisfies
// the space's constraints.
func (e *Exec) config(i int, key string) (genome.Config, error) {
	sp := e.spaces[i]
	if len(sp.Params()) == 0 {
		return nil, fmt.Errorf("pipeline %q: stage %q has no params, so no config %q", e.pl.Name, e.pl.Stages[i].Name, key)
	}
	c, err := parseConfig(sp, key)
	if err != nil {
		return nil, fmt.Errorf("pipeline %q: stage %q: %w", e.pl.Name, e.pl.Stages[i].Name, err)
	}
	return c, nil
}

// SetConfig makes stage name run at config key from now on.
func (e *Exec) SetConfig(name, key string) error {
	i := e.pl.index(name)
	if i < 0 {
		return fmt.Errorf("pipeline %q: no stage %q", e.pl.Name, name)
	}
	c, err := e.config(i, key)
	if err != nil {
		return err
	}
	e.configs[i], e.pl.Stages[i].Config = c, e.spaces[i].Key(c)
	return nil
}

// Check implements Target.
func (e *Exec) Check(perts []Perturbation) error {
	for _, p := range perts {
		if err := p.check(e.pl); err != nil {
			return err
		}
		if p.Speedup != 0 {
			return fmt.Errorf("perturbation %q: a virtual speedup pauses every other stream while the stage runs, and an exec harness delays only the stage asked for", p.Name)
		}
		if p.Config != "" {
			if _, err := e.config(e.pl.index(p.Stage), p.Config); err != nil {
				return fmt.Errorf("perturbation %q: %w", p.Name, err)
			}
		}
	}
	return nil
}

// Run implements Target: the harness runs the iteration; its spans, on
// its own monotonic clock, become causal spans with the declared joins as
// dependencies. Where it reports stage times only, the spans are laid out
// from them as the declared graph runs (each stage as soon as its stream
// and joins allow), and EndToEnd is the time it reported.
func (e *Exec) Run(ctx context.Context, it int, p *Perturbation) (Iteration, error) {
	if p != nil {
		if err := e.Check([]Perturbation{*p}); err != nil {
			return Iteration{}, err
		}
	}
	configs := map[string]map[string]any{}
	for i, s := range e.pl.Stages {
		c := e.configs[i]
		if p != nil && p.Config != "" && p.Stage == s.Name {
			c, _ = e.config(i, p.Config) // checked above
		}
		if e.Tunable(i) {
			configs[s.Name] = e.spaces[i].ConfigMap(c)
		}
	}
	var delays map[string]int64
	if p != nil && p.Delay > 0 {
		delays = map[string]int64{p.Stage: int64(p.Delay)}
	}
	res, err := e.h.RunPipeline(ctx, it, configs, delays)
	if err != nil {
		return Iteration{}, err
	}
	n := len(e.pl.Stages)
	spans := make([]causal.Span, n)
	var delayed int64
	end := map[string]int64{} // stage -> end, for laying out stage times
	last := map[string]int64{}
	for i, s := range e.pl.Stages {
		var deps []uint64
		for _, a := range s.After {
			deps = append(deps, uint64(it*n+e.pl.index(a)+1))
		}
		sp := causal.Span{ID: uint64(it*n + i + 1), Pipeline: e.pl.Name, Iteration: it, Kernel: s.Kernel,
			Problem: s.Problem, Device: e.h.Device(), Stream: s.Stream, Deps: deps}
		var dl int64
		if res.Spans != nil {
			r := res.Spans[i]
			sp.Start, sp.End, dl = r.StartNS, r.EndNS, r.DelayedNS
		} else {
			sp.Start = e.next
			if t, ok := last[s.Stream]; ok {
				sp.Start = t
			}
			for _, a := range s.After {
				sp.Start = max(sp.Start, end[a])
			}
			sp.End = sp.Start + res.StageNS[s.Name]
			dl = res.DelayedNS[s.Name]
			end[s.Name], last[s.Stream] = sp.End, sp.End
		}
		if p != nil && p.Delay > 0 && p.Stage == s.Name {
			delayed = dl
			if delayed == 0 { // not reported: as asked
				delayed = int64(p.Delay)
			}
		}
		spans[i] = sp
	}
	first, lastEnd := spans[0].Start, spans[0].End
	for _, s := range spans {
		first, lastEnd = min(first, s.Start), max(lastEnd, s.End)
	}
	e2e := lastEnd - first
	if res.Spans == nil {
		e2e = res.EndToEndNS
		e.next = lastEnd + int64(time.Millisecond)
	}
	return Iteration{Spans: spans, EndToEnd: e2e, Delayed: delayed}, nil
}

// Scale implements Target. The harness runs its stages only as parts of
// its pipeline, so a stage is timed in whole iterations, one at its own
// config and one at key in turn, after one warm-up of each: the ratio of
// the medians of its spans' durations.
func (e *Exec) Scale(ctx context.Context, stage, key string, runs int) (float64, error) {
	i := e.pl.index(stage)
	if i < 0 {
		return 0, fmt.Errorf("pipeline %q: no stage %q", e.pl.Name, stage)
	}
	p := &Perturbation{Name: key, Stage: stage, Config: key}
	times := [2][]float64{}
	for k := -1; k < runs; k++ {
		for c, pp := range []*Perturbation{nil, p} {
			x, err := e.Run(ctx, -1, pp)
			if err != nil {
				return 0, err
			}
			if k >= 0 {
				times[c] = append(times[c], float64(x.Spans[i].Duration()))
			}
		}
	}
	own := evaluate.Median(times[0])
	if own <= 0 {
		own = 1
	}
	return evaluate.Median(times[1]) / own, nil
}

// ExecPerturbations are the default perturbations of an exec pipeline
// whose baseline end-to-end time is base: each stage delayed by a fifth
// of it (at least 100 µs, in steps of 100 µs), and each tunable stage at
// another config: the first valid one of its own config with one param
// moved to the far end of its values.
func ExecPerturbations(e *Exec, base time.Duration) []Perturbation {
	step := 100 * time.Microsecond
	d := max(step, (base / 5).Round(step))
	var out []Perturbation
	for _, s := range e.pl.Stages {
		out = append(out, Perturbation{Name: fmt.Sprintf("%s+%gms", s.Name, float64(d)/float64(time.Millisecond)), Stage: s.Name, Delay: d})
	}
	for i, s := range e.pl.Stages {
		if !e.Tunable(i) {
			continue
		}
		if key, ok := e.otherConfig(i); ok {
			out = append(out, Perturbation{Name: s.Name + "@" + key, Stage: s.Name, Config: key})
		}
	}
	return out
}

// otherConfig is a valid config of stage i other than its own: one param
// moved to whichever end of its values is farther.
func (e *Exec) otherConfig(i int) (string, bool) {
	sp, own := e.spaces[i], e.configs[i]
	for j, q := range sp.Params() {
		c := append(genome.Config(nil), own...)
		c[j] = 0
		if own[j] < len(q.Values)/2 {
			c[j] = len(q.Values) - 1
		}
		if c[j] != own[j] && sp.Valid(c) {
			return sp.Key(c), true
		}
	}
	return "", false
}
