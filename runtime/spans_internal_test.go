package runtime

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A full ring refuses at once, and gives its spans back in order.
func TestRing(t *testing.T) {
	var q ring
	q.init(4)
	for i := range 4 {
		if n, ok := q.push(&spanRec{id: uint64(i + 1)}); !ok || n != uint64(i+1) {
			t.Fatalf("push %d = %d, %v; want %d, true", i, n, ok, i+1)
		}
	}
	if _, ok := q.push(&spanRec{id: 5}); ok {
		t.Fatal("push into a full ring succeeded")
	}
	var rec spanRec
	for i := range 4 {
		if !q.pop(&rec) || rec.id != uint64(i+1) {
			t.Fatalf("pop %d = %d", i, rec.id)
		}
	}
	if q.pop(&rec) {
		t.Fatal("pop from an empty ring succeeded")
	}
	if _, ok := q.push(&spanRec{id: 6}); !ok {
		t.Fatal("push after draining failed")
	}
}

// Many producers, one consumer: every span comes out once.
func TestRingConcurrent(t *testing.T) {
	var q ring
	q.init(64)
	const producers, each = 4, 5000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				rec := spanRec{id: uint64(p*each + i + 1)}
				for _, ok := q.push(&rec); !ok; _, ok = q.push(&rec) {
				}
			}
		}()
	}
	seen := make([]bool, producers*each+1)
	var rec spanRec
	for n := 0; n < producers*each; {
		if q.pop(&rec) {
			if seen[rec.id] {
				t.Fatalf("span %d twice", rec.id)
			}
			seen[rec.id] = true
			n++
		}
	}
	wg.Wait()
}

// Start and End allocate nothing, deps included.
func TestSpansNoAlloc(t *testing.T) {
	r := newSpanRecorder(New(Options{}), "p", SpanOptions{Buffer: 1 << 12})
	prev := r.Start("k", "64", "s0")
	prev.End()
	allocs := testing.AllocsPerRun(1000, func() {
		s := r.Start("k", "64", "s0", prev.ID())
		s.End()
		prev = s
	})
	if allocs != 0 {
		t.Errorf("Start+End: %v allocs, want 0", allocs)
	}
	if st := r.Stats(); st.Ended != 1002 || st.DroppedFull != 0 {
		t.Errorf("Stats() = %+v, want 1002 ended, none dropped", st)
	}
}

// BenchmarkSpan is the launch path: one Start/End pair with a dep, with
// room in the buffer (the ring is emptied, off the clock, every 4096).
func BenchmarkSpan(b *testing.B) {
	r := newSpanRecorder(New(Options{}), "p", SpanOptions{Buffer: 4096})
	prev := r.Start("k", "64", "s0")
	prev.End()
	var rec spanRec
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i++; i%4096 == 0 {
			b.StopTimer()
			for r.ring.pop(&rec) {
			}
			b.StartTimer()
		}
		s := r.Start("k", "64", "s0", prev.ID())
		s.End()
		prev = s
	}
	if st := r.Stats(); st.DroppedFull != 0 {
		b.Fatalf("%d spans dropped", st.DroppedFull)
	}
}

// What the sender sends when: ended iterations (all their spans ended)
// first and in order, at most a request per Interval/4 unless a full batch
// waits; the others' spans once a batch of them waits or the oldest has
// waited Interval; nothing while held back.
func TestReadyCount(t *testing.T) {
	const sec = int64(time.Second)
	now := time.Unix(1000, 0)
	nowNS := now.UnixNano()
	// iters lists the pending spans' iterations in end order; each ended
	// age ns before nowNS.
	pending := func(age int64, iters ...int64) []spanRec {
		var p []spanRec
		for i, it := range iters {
			p = append(p, spanRec{id: uint64(i + 1), iter: it, end: nowNS - age})
		}
		return p
	}
	long := now.Add(-time.Hour)
	tests := []struct {
		name     string
		pending  []spanRec
		cur      int64
		open     map[int64]int64 // iteration: spans started, not ended
		last     time.Time       // the last request
		hold     time.Time
		want     int
		released int64
		first    []int64 // the iterations of the first want spans, in order
	}{
		{"ended iterations go", pending(0, 0, 1, 0, 2, 1), 2, nil, long, time.Time{}, 4, 2, []int64{0, 0, 1, 1}},
		{"within Interval/4 of the last request they wait", pending(0, 0, 1, 0, 2), 2, nil, now.Add(-100 * time.Millisecond), time.Time{}, 0, 0, nil},
		{"after Interval/4 they go", pending(0, 0, 1, 0, 2), 2, nil, now.Add(-300 * time.Millisecond), time.Time{}, 3, 2, []int64{0, 0, 1}},
		{"an iteration with a span open waits, and those after it", pending(0, 0, 1, 2, 3), 3, map[int64]int64{1: 1}, long, time.Time{}, 1, 1, []int64{0}},
		{"the running iteration waits", pending(0, 3, 3, 3), 3, nil, long, time.Time{}, 0, 0, nil},
		{"the running iteration goes after Interval", pending(sec, 3, 3, 3), 3, nil, long, time.Time{}, 3, 3, []int64{3, 3, 3}},
		{"after Interval an open iteration goes too", pending(sec, 1, 2), 3, map[int64]int64{1: 1}, long, time.Time{}, 2, 3, []int64{1, 2}},
		{"a full batch goes at once", pending(0, 3, 3, 3, 3, 3), 3, nil, now, time.Time{}, 4, 3, []int64{3, 3, 3, 3}},
		{"held back, nothing goes", pending(sec, 0, 1), 2, nil, long, now.Add(time.Second), 0, 0, nil},
		{"nothing waits", nil, 0, nil, long, time.Time{}, 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newSpanRecorder(New(Options{}), "p", SpanOptions{Batch: 4, Interval: time.Second})
			for it, n := range tt.open {
				r.open[it%openSlots].Store(n)
			}
			s := sender{r: r, pending: tt.pending, last: tt.last, hold: tt.hold}
			got, released := s.readyCount(now, nowNS, tt.cur)
			if got != tt.want || (got > 0 && released != tt.released) {
				t.Fatalf("readyCount = %d, released %d; want %d, %d", got, released, tt.want, tt.released)
			}
			for i, it := range tt.first {
				if s.pending[i].iter != it {
					t.Errorf("pending[%d] is of iteration %d, want %d (order %+v)", i, s.pending[i].iter, it, s.pending)
				}
			}
		})
	}
}

// Start and End keep each iteration's count of open spans.
func TestOpenSpans(t *testing.T) {
	r := newSpanRecorder(New(Options{}), "p", SpanOptions{})
	a := r.Start("a", "", "s0")
	r.NextIteration()
	b := r.Start("b", "", "s0")
	if r.open[0].Load() != 1 || r.open[1].Load() != 1 {
		t.Fatalf("open = %d, %d; want 1, 1", r.open[0].Load(), r.open[1].Load())
	}
	s := sender{r: r}
	if got := s.ended(1); got != 0 {
		t.Errorf("ended(1) with a span of iteration 0 open = %d, want 0", got)
	}
	a.End()
	if got := s.ended(1); got != 1 {
		t.Errorf("ended(1) after it ended = %d, want 1", got)
	}
	b.End()
	if r.open[1].Load() != 0 {
		t.Errorf("open[1] = %d after b ended", r.open[1].Load())
	}
}

func TestBatchLen(t *testing.T) {
	tests := []struct {
		iters []int64
		limit int
		want  int
	}{
		{[]int64{0, 0, 1, 1, 2}, 4, 4},    // whole iterations while they fit
		{[]int64{0, 0, 1, 1, 1}, 4, 2},    // the next would not fit
		{[]int64{0, 0, 0, 0, 0, 1}, 4, 4}, // one iteration over the limit is cut
		{[]int64{5}, 4, 1},
	}
	for _, tt := range tests {
		var recs []spanRec
		for _, it := range tt.iters {
			recs = append(recs, spanRec{iter: it})
		}
		if got := batchLen(recs, tt.limit); got != tt.want {
			t.Errorf("batchLen(%v, %d) = %d, want %d", tt.iters, tt.limit, got, tt.want)
		}
	}
}

// The sender, driven by hand: an iteration whose span ends after the next
// one began is held until it ends, then goes whole.
func TestSenderHoldsOpenIteration(t *testing.T) {
	r := newSpanRecorder(New(Options{}), "p", SpanOptions{Interval: time.Hour})
	late := r.Start("late", "", "s9")
	r.Start("a", "", "s0").End()
	r.NextIteration()
	r.Start("b", "", "s0").End()
	s := sender{r: r}
	s.drain()
	now := time.Now()
	if k, _ := s.readyCount(now, r.now(), r.iter.Load()); k != 0 {
		t.Fatalf("with a span of iteration 0 open, %d spans ready, want 0", k)
	}
	late.End()
	r.NextIteration()
	s.drain()
	k, released := s.readyCount(now, r.now(), r.iter.Load())
	if k != 3 || released != 2 {
		t.Fatalf("once it ended: %d ready, released %d; want 3 (iterations 0 and 1), 2", k, released)
	}
	for i, it := range []int64{0, 0, 1} {
		if s.pending[i].iter != it {
			t.Errorf("pending[%d] of iteration %d, want %d", i, s.pending[i].iter, it)
		}
	}
}

// BenchmarkSpanParallel is BenchmarkSpan from every core at once, each
// goroutine on its own stream, into a ring with room for 2^18 spans: run
// it with -benchtime of at most 200000x (dropped/op says if it was full).
func BenchmarkSpanParallel(b *testing.B) {
	r := newSpanRecorder(New(Options{}), "p", SpanOptions{Buffer: 1 << 18})
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer() // not the ring's allocation
	b.RunParallel(func(pb *testing.PB) {
		stream := "s" + strconv.FormatInt(n.Add(1), 10)
		for pb.Next() {
			r.Start("k", "64", stream).End()
		}
	})
	st := r.Stats()
	b.ReportMetric(float64(st.DroppedFull)/float64(max(st.Ended, 1)), "dropped/op")
}
