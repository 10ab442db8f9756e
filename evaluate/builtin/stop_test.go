package builtin

import (
	"context"
	"errors"
	goruntime "runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

// A context cancelled while a run is in progress stops that run: Evaluate
// returns context.Canceled without waiting for the run to end by itself.
func TestEvaluateStopsWithinRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	var sawStop atomic.Bool
	k := newKernel(fakeDef(func(in Inputs, _ []float32) {
		select {
		case <-started:
		default:
			close(started)
		}
		// A run that would take 30 s unless told to stop.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); goruntime.Gosched() {
			if in.stopped() {
				sawStop.Store(true)
				return
			}
		}
	}), Options{Reps: evaluate.Reps{Warmup: 0, Min: 3, Max: 3}})
	go func() { <-started; cancel() }()
	_, err := k.Evaluate(ctx, genome.Config{0}, problem(4))
	if !errors.Is(err, context.Canceled) || !sawStop.Load() {
		t.Errorf("Evaluate cancelled during a run = %v (the run saw the stop: %v), want context.Canceled from a stopped run", err, sawStop.Load())
	}
}

// Each builtin kernel, and its float64 reference, does no work on stopped
// inputs: the output stays as it was, where an unstopped run fills it.
func TestKernelsStop(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		kernel string
		dims   []int
	}{
		{"sgemm", []int{64, 64, 64}},
		{"conv2d", []int{64, 64, 5}},
		{"reduce", []int{100_000}},
	} {
		k := mustNew(t, tt.kernel, Options{})
		p := problem(tt.dims...)
		s, err := k.Space(p)
		if err != nil {
			t.Fatal(err)
		}
		c := s.Default()
		in := k.NewInputs(p, 1)
		_, _, n := k.def.sizes(tt.dims)
		full := make([]float32, n)
		k.def.prepare(s.Map(c), tt.dims)(in, full)
		if !slices.ContainsFunc(full, func(x float32) bool { return x != 0 }) {
			t.Fatalf("%s: a full run left the output zero", tt.kernel)
		}
		in.stop = new(atomic.Bool)
		in.stop.Store(true)
		out := make([]float32, n)
		k.def.prepare(s.Map(c), tt.dims)(in, out)
		if slices.ContainsFunc(out, func(x float32) bool { return x != 0 }) {
			t.Errorf("%s: a stopped run computed its output", tt.kernel)
		}
		if tt.kernel == "reduce" {
			continue // one pass over at most 2^28 floats: not worth stopping
		}
		if ref := k.def.ref(tt.dims, in); slices.ContainsFunc(ref, func(x float64) bool { return x != 0 }) {
			t.Errorf("%s: a stopped reference computed its output", tt.kernel)
		}
		if ref, abs := k.def.verify.refAbs(tt.dims, in); slices.ContainsFunc(ref, func(x float64) bool { return x != 0 }) || slices.ContainsFunc(abs, func(x float64) bool { return x != 0 }) {
			t.Errorf("%s: a stopped reference with magnitudes computed its output", tt.kernel)
		}
	}
}
