package wasm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
)

// loadLeaky is load without the Close at cleanup, which would wait
// forever for a run that never returned.
func loadLeaky(t *testing.T, opt Options) *Evaluator {
	t.Helper()
	e, err := Load(context.Background(), testWasm, opt)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// evaluateWithin runs Evaluate and fails the test, rather than hanging it,
// when it has not returned within limit.
func evaluateWithin(t *testing.T, ctx context.Context, e *Evaluator, mode string, limit time.Duration) (evaluate.Trial, error) {
	t.Helper()
	p := evaluate.Problem{Dims: []int{1}}
	sp, _ := e.Space(p)
	c, err := sp.ParseKey(mode + ",1")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		tr  evaluate.Trial
		err error
	}
	done := make(chan result, 1)
	go func() {
		tr, err := e.Evaluate(ctx, c, p)
		done <- result{tr, err}
	}()
	select {
	case r := <-done:
		return r.tr, r.err
	case <-time.After(limit):
		t.Fatalf("Evaluate(%s) of a run that never returns: still running after %s", mode, limit)
		return evaluate.Trial{}, nil
	}
}

// A run that never returns is stopped soon after the measurement's
// timeout (checked between runs, where a hung run never comes back): the
// trial is a timeout, the instance is discarded, and the next config
// measures normally.
func TestHangTimesOut(t *testing.T) {
	e := loadLeaky(t, Options{Reps: evaluate.Reps{Min: 3, Max: 3}, Timeout: 100 * time.Millisecond})
	tr, err := evaluateWithin(t, context.Background(), e, "hang", 20*time.Second)
	if err != nil || tr.Status != evaluate.StatusTimeout || !strings.Contains(tr.Error, "100ms") {
		t.Fatalf("Evaluate(hang) = %s %q, %v; want a timeout naming the 100ms limit", tr.Status, tr.Error, err)
	}
	if tr, err := evaluateWithin(t, context.Background(), e, "ok", 20*time.Second); err != nil || !tr.OK() {
		t.Fatalf("Evaluate(ok) after the hang = %s %q, %v", tr.Status, tr.Error, err)
	}
	e.Close()
}

// Cancelling the context (a daemon shutting down) stops a run that never
// returns at once, and Evaluate returns the context's error.
func TestHangCancelled(t *testing.T) {
	e := loadLeaky(t, Options{Reps: evaluate.Reps{Min: 3, Max: 3}, Timeout: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := evaluateWithin(t, ctx, e, "hang", 20*time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Evaluate(hang) with a cancelled context = %v, want its error", err)
	}
	e.Close()
}
