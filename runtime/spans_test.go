package runtime_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/runtime"
)

func recorder(t testing.TB, sock, pipeline string, opt runtime.SpanOptions) *runtime.SpanRecorder {
	t.Helper()
	rec, err := runtime.New(runtime.Options{Socket: sock}).Spans(pipeline, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close(context.Background()) })
	return rec
}

func closeRec(t testing.TB, rec *runtime.SpanRecorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// fork runs one iteration of a fork-join pipeline: a, then b and c on
// two streams after it, then d after both.
func fork(rec *runtime.SpanRecorder) {
	a := rec.Start("a", "64", "s0")
	a.End()
	b := rec.Start("b", "64", "s0", a.ID())
	c := rec.Start("c", "64", "s1", a.ID())
	c.End()
	b.End()
	rec.Start("d", "64", "s0", b.ID(), c.ID()).End()
}

// A finished iteration goes as one batch, with its deps; Close sends the
// running one.
func TestSpansBatchPerIteration(t *testing.T) {
	t.Parallel()
	srv := newSpanServer(t, "fj")
	rec := recorder(t, srv.sock, "fj", runtime.SpanOptions{Device: "cpu0", Interval: time.Hour})
	fork(rec)
	if it := rec.NextIteration(); it != 1 {
		t.Fatalf("NextIteration() = %d, want 1", it)
	}
	b := srv.next(t)
	if len(b) != 4 {
		t.Fatalf("first batch has %d spans, want iteration 0's 4: %+v", len(b), b)
	}
	byKernel := map[string]causal.Span{}
	for _, s := range b {
		if s.Iteration != 0 || s.Pipeline != "fj" || s.Device != "cpu0" || s.Problem != "64" || s.End < s.Start {
			t.Errorf("span %+v", s)
		}
		byKernel[s.Kernel] = s
	}
	if d := byKernel["d"].Deps; len(d) != 2 || d[0] != byKernel["b"].ID || d[1] != byKernel["c"].ID {
		t.Errorf("d's deps = %v, want b's and c's ids", d)
	}
	if now := time.Now().UnixNano(); byKernel["a"].Start > now || byKernel["a"].Start < now-int64(time.Minute) {
		t.Errorf("start %d is not Unix ns near now (%d)", byKernel["a"].Start, now)
	}
	fork(rec)
	closeRec(t, rec)
	b = srv.next(t)
	if len(b) != 4 || b[0].Iteration != 1 {
		t.Fatalf("batch at Close = %+v, want iteration 1's 4 spans", b)
	}
	ids := map[uint64]bool{}
	for _, s := range srv.all() {
		ids[s.ID] = true
	}
	st := rec.Stats()
	if len(ids) != 8 || st.Ended != 8 || st.Sent != 8 || st.Batches != 2 || st.DepsDropped != 0 || st.LastError != "" {
		t.Errorf("%d distinct ids; Stats() = %+v; want 8 sent in 2 batches", len(ids), st)
	}
	// After Close, spans are dropped and counted.
	rec.Start("late", "", "s0").End()
	if st := rec.Stats(); st.DroppedFull != 1 {
		t.Errorf("span after Close: Stats() = %+v, want DroppedFull 1", st)
	}
}

// A batch cut inside an iteration loses the deps across the cut, counted.
func TestSpansDepsAcrossBatches(t *testing.T) {
	t.Parallel()
	srv := newSpanServer(t, "p")
	rec := recorder(t, srv.sock, "p", runtime.SpanOptions{Batch: 2, Interval: time.Hour})
	a := rec.Start("a", "", "s0")
	a.End()
	rec.Start("b", "", "s0").End()
	rec.Start("c", "", "s1", a.ID()).End()
	closeRec(t, rec)
	all := srv.all()
	st := rec.Stats()
	if len(all) != 3 || st.Sent != 3 || st.Batches != 2 || st.DepsDropped != 1 {
		t.Fatalf("got %+v; Stats() = %+v; want 3 spans in 2 batches, c's dep on a dropped", all, st)
	}
	if all[2].Kernel != "c" || len(all[2].Deps) != 0 {
		t.Errorf("c = %+v, want no deps", all[2])
	}
}

// A span that overlaps another on its stream would make quasimd refuse the
// whole batch: it alone is removed, with the deps on it, and counted.
func TestSpansInvalidRemoved(t *testing.T) {
	t.Parallel()
	srv := newSpanServer(t, "p")
	rec := recorder(t, srv.sock, "p", runtime.SpanOptions{Interval: time.Hour})
	a := rec.Start("a", "", "s0")
	b := rec.Start("b", "", "s0") // overlaps a on s0
	a.End()
	b.End()
	rec.Start("c", "", "s1", a.ID(), b.ID()).End()
	closeRec(t, rec)
	all := srv.all()
	st := rec.Stats()
	if len(all) != 2 || all[0].Kernel != "a" || all[1].Kernel != "c" || len(all[1].Deps) != 1 || all[1].Deps[0] != a.ID() {
		t.Fatalf("sent %+v, want a and c (after a only)", all)
	}
	if st.Invalid != 1 || st.DepsDropped != 1 || st.Sent != 2 || !strings.Contains(st.LastError, "overlaps") {
		t.Errorf("Stats() = %+v, want 1 invalid, 1 dep dropped, the reason", st)
	}
}

// An unknown pipeline: quasimd refuses the batch; counted, with why.
func TestSpansUnknownPipeline(t *testing.T) {
	t.Parallel()
	srv := newSpanServer(t, "p")
	rec := recorder(t, srv.sock, "nope", runtime.SpanOptions{})
	rec.Start("a", "", "s0").End()
	closeRec(t, rec)
	if st := rec.Stats(); st.Rejected != 1 || st.Sent != 0 || !strings.Contains(st.LastError, `pipeline "nope" not found`) {
		t.Errorf("Stats() = %+v, want 1 rejected, saying why", st)
	}
}

// Past the rate limit the batch is kept and sent again after Retry-After
// (here absent: after Interval).
func TestSpansRateLimited(t *testing.T) {
	t.Parallel()
	srv := newSpanServer(t, "p")
	srv.tooMany.Store(2)
	rec := recorder(t, srv.sock, "p", runtime.SpanOptions{Interval: 10 * time.Millisecond})
	fork(rec)
	rec.NextIteration()
	if b := srv.next(t); len(b) != 4 {
		t.Fatalf("batch after the rate limit: %d spans, want 4", len(b))
	}
	closeRec(t, rec)
	if st, n := rec.Stats(), srv.requests.Load(); st.Sent != 4 || st.Unsent != 0 || n != 3 {
		t.Errorf("Stats() = %+v after %d requests; want 4 sent on the third", st, n)
	}
}

// A batch over quasimd's body limit is sent again in halves.
func TestSpansTooLargeSplit(t *testing.T) {
	t.Parallel()
	srv := newSpanServer(t, "p")
	srv.maxBody = 600 // about 4 spans
	rec := recorder(t, srv.sock, "p", runtime.SpanOptions{Interval: time.Hour})
	for range 16 {
		rec.Start("k", "1024,1024", "s0").End()
	}
	closeRec(t, rec)
	st := rec.Stats()
	if st.Sent != 16 || st.Batches < 4 || st.Rejected != 0 || len(srv.all()) != 16 {
		t.Errorf("Stats() = %+v, server got %d; want all 16 sent in 4 batches or more", st, len(srv.all()))
	}
}

// With no daemon, End never waits, and Close gives up within its deadline,
// counting the spans as unsent.
func TestSpansDaemonDown(t *testing.T) {
	t.Parallel()
	rec := recorder(t, filepath.Join(t.TempDir(), "none.sock"), "p", runtime.SpanOptions{Interval: time.Millisecond})
	for range 100 {
		fork(rec)
		rec.NextIteration()
	}
	closeRec(t, rec)
	st := rec.Stats()
	if st.Ended != 400 || st.Sent != 0 || st.Unsent+st.DroppedFull != 400 || !strings.Contains(st.LastError, "none.sock") {
		t.Errorf("Stats() = %+v, want all 400 unsent or dropped, saying why", st)
	}
}

// Close returns when its deadline passes, even while a request hangs.
func TestSpansCloseDeadline(t *testing.T) {
	t.Parallel()
	srv := newSpanServer(t, "p")
	srv.hang = make(chan struct{})
	rec := recorder(t, srv.sock, "p", runtime.SpanOptions{Timeout: time.Hour})
	rec.Start("a", "", "s0").End()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := rec.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close with a hanging daemon = %v, want the deadline", err)
	}
}

func TestSpansEmptyPipeline(t *testing.T) {
	if _, err := runtime.New(runtime.Options{}).Spans("", runtime.SpanOptions{}); err == nil {
		t.Error(`Spans("") succeeded`)
	}
	var zero runtime.Span
	zero.End() // does nothing
	var none *runtime.SpanRecorder
	none.Start("k", "", "s0").End()
	if none.NextIteration() != 0 {
		t.Error("a nil recorder counted an iteration")
	}
}

// BenchmarkSpanSaturated is Start/End pairs with a dep as fast as one
// goroutine can, with the real sender behind: far more spans than it
// sends, so most End find the buffer full (dropped/op says how many).
// BenchmarkSpan measures the pair with room in the buffer.
func BenchmarkSpanSaturated(b *testing.B) {
	srv := newSpanServer(b, "p")
	rec := recorder(b, srv.sock, "p", runtime.SpanOptions{})
	prev := rec.Start("k", "64", "s0")
	prev.End()
	b.ReportAllocs()
	for b.Loop() {
		s := rec.Start("k", "64", "s0", prev.ID())
		s.End()
		prev = s
	}
	b.StopTimer()
	closeRec(b, rec)
	st := rec.Stats()
	b.ReportMetric(float64(st.DroppedFull)/float64(max(st.Ended, 1)), "dropped/op")
}
