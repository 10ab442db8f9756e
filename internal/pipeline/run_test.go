package pipeline

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/causal"
)

// small is the builtin pipeline's shape at problem sizes that run in well
// under a millisecond, for tests.
func small() Pipeline {
	return Pipeline{Name: "small", Stages: []Stage{
		{Name: "big", Kernel: "conv2d", Problem: "64,64,3", Stream: "a"},
		{Name: "side", Kernel: "conv2d", Problem: "16,16,3", Stream: "b"},
		{Name: "mm", Kernel: "sgemm", Problem: "16,16,16", Stream: "b"},
		{Name: "sum", Kernel: "reduce", Problem: "4096", Stream: "a", After: []string{"side"}},
	}}
}

func newRunner(t *testing.T, p Pipeline) *Runner {
	t.Helper()
	r, err := New(Config{Pipeline: p, Clock: Since(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestValidate(t *testing.T) {
	if err := Builtin().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*Pipeline)
		want string
	}{
		{func(p *Pipeline) { p.Name = "" }, "name missing"},
		{func(p *Pipeline) { p.Stages = nil }, "no stages"},
		{func(p *Pipeline) { p.Stages[1].Name = "big" }, `stages[1]: name "big" used twice`},
		{func(p *Pipeline) { p.Stages[2].Stream = "" }, "stages[2] (mm): stream missing"},
		{func(p *Pipeline) { p.Stages[3].After = []string{"nope"} }, `after "nope": no earlier stage`},
		{func(p *Pipeline) { p.Stages[3].After = []string{"big"} }, `after "big": same stream`},
		{func(p *Pipeline) { p.Stages[1].After = []string{"sum"} }, `after "sum": no earlier stage`},
	} {
		p := small()
		p.Stages = slices.Clone(p.Stages)
		c.edit(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	p := small()
	p.Stages[0].Config = "8,1,1,False"
	if _, err := New(Config{Pipeline: p, Clock: Since(time.Now())}); err == nil || !strings.Contains(err.Error(), "stages[0] (big)") {
		t.Errorf("bad config: %v", err)
	}
}

// A recorded iteration has one span per stage with the join as a
// dependency, and its model replays it exactly.
func TestRunRecordsSpans(t *testing.T) {
	r := newRunner(t, small())
	it, err := r.Run(context.Background(), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(it.Spans) != 4 {
		t.Fatalf("%d spans", len(it.Spans))
	}
	sum := it.Spans[3]
	if sum.ID != 3*4+4 || !slices.Equal(sum.Deps, []uint64{3*4 + 2}) || sum.Stream != "a" || sum.Kernel != "reduce" {
		t.Fatalf("join span %+v", sum)
	}
	side, mm := it.Spans[1], it.Spans[2]
	if mm.Start < side.End || sum.Start < side.End || sum.Start < it.Spans[0].End {
		t.Fatalf("order broken: %+v", it.Spans)
	}
	g, err := causal.Build(it.Spans)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := g.Simulate(); got != it.EndToEnd {
		t.Fatalf("model %d ns, recorded %d", got, it.EndToEnd)
	}
}

// A delay lengthens the stage's span by at least the delay; a config
// perturbation must be a valid config of the stage.
func TestPerturbations(t *testing.T) {
	r := newRunner(t, small())
	ctx := context.Background()
	it, err := r.Run(ctx, 0, &Perturbation{Name: "d", Stage: "mm", Delay: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if d := it.Spans[2].Duration(); d < int64(2*time.Millisecond) || it.Delayed < int64(2*time.Millisecond) || it.Delayed > d {
		t.Fatalf("delayed span took %d ns, its delay %d", d, it.Delayed)
	}
	for _, c := range []struct {
		p    Perturbation
		want string
	}{
		{Perturbation{Name: "x", Stage: "nope", Delay: 1}, `stage "nope" is not in pipeline "small"`},
		{Perturbation{Name: "x", Stage: "mm"}, "one of them"},
		{Perturbation{Name: "x", Stage: "mm", Delay: 1, Config: "16,16,16,1,1,False,ijk,fp32"}, "one of them"},
		{Perturbation{Name: "x", Stage: "mm", Delay: 1, Speedup: 0.2}, "one of them"},
		{Perturbation{Name: "x", Stage: "mm", Config: "1,2,3"}, `stage "mm"`},
		{Perturbation{Name: "x", Stage: "mm", Speedup: 1}, "speedup 1: want a fraction above 0 and below 1"},
		{Perturbation{Name: "x", Stage: "mm", Speedup: -0.1}, "speedup -0.1"},
		{Perturbation{Name: "x", Stage: "mm", Speedup: math.NaN()}, "speedup NaN"},
	} {
		if _, err := r.Run(ctx, 1, &c.p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
	if _, err := r.Run(ctx, 1, &Perturbation{Name: "c", Stage: "mm", Config: "16,16,16,2,1,True,ikj,fp32"}); err != nil {
		t.Fatal(err)
	}
	if err := r.SetConfig("mm", "16,16,16,2,1,True,ikj,fp32"); err != nil {
		t.Fatal(err)
	}
	if got := r.Pipeline().Stages[2].Config; got != "16,16,16,2,1,True,ikj,fp32" {
		t.Fatalf("config %q", got)
	}
}

// The experiment's bookkeeping: every perturbation gets Runs pairs, and a
// delay of a stage off the critical path by less than its slack is
// predicted to change nothing.
func TestExperimentSmall(t *testing.T) {
	r := newRunner(t, small())
	perts := []Perturbation{
		{Name: "big+1ms", Stage: "big", Delay: time.Millisecond},
		{Name: "mm-fast", Stage: "mm", Config: "16,16,16,2,1,True,ikj,fp32"},
	}
	rep, err := Experiment(context.Background(), r, perts, ExperimentOptions{Runs: 3, Warmup: 1, Alone: 3, RNG: rand.New(rand.NewPCG(1, 1))}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Runs != 3 {
		t.Fatalf("report %+v", rep)
	}
	big := rep.Results[0]
	// Whether big is on the critical path depends on how the two streams
	// were scheduled (on a loaded machine the side stream can take longer),
	// so only its range is bookkeeping.
	if big.Predicted.N != 3 || big.Measured.N != 3 || big.Predicted.Min <= 0 || big.OnPath < 0 || big.OnPath > 1 {
		t.Fatalf("delay on the path: %+v", big)
	}
	if mm := rep.Results[1]; mm.Scale <= 0 {
		t.Fatalf("config: %+v", mm)
	}
	if rep.WorstError < rep.MeanError || rep.Within > 2 {
		t.Fatalf("summary %+v", rep)
	}
	// Baseline iterations: one per pair, their spans kept.
	if rep.Baseline.N != 6 || len(rep.Spans) != 6*4 || rep.Baseline.Min <= 0 {
		t.Fatalf("baseline %+v, %d spans", rep.Baseline, len(rep.Spans))
	}
	if err := causal.Validate(rep.Spans); err != nil {
		t.Fatal(err)
	}
	// No perturbations: baseline iterations only.
	rep, err = Experiment(context.Background(), r, nil, ExperimentOptions{Runs: 4, Warmup: 1, RNG: rand.New(rand.NewPCG(1, 1))}, time.Unix(0, 0))
	if err != nil || rep.Baseline.N != 4 || len(rep.Results) != 0 {
		t.Fatalf("baseline only: %+v, %v", rep.Baseline, err)
	}
}

// Every builtin perturbation names a stage of the builtin pipeline and,
// where it changes a config, a config of that kernel's space (a parameter
// added to a builtin kernel changes its keys).
func TestBuiltinPerturbationsFit(t *testing.T) {
	r := newRunner(t, Builtin())
	if err := r.Check(append(BuiltinPerturbations(), BuiltinSpeedups()...)); err != nil {
		t.Fatal(err)
	}
}
