package runtime

import (
	"sync"
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

// What the sender sends when: finished iterations first, at most a
// request per Interval/4 unless a full batch waits; the running
// iteration's spans once a batch of them waits or the oldest has waited
// Interval; nothing while held back.
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
	tests := []struct {
		name    string
		pending []spanRec
		cur     int64
		last    time.Time // the last request
		hold    time.Time
		want    int
		first   []int64 // the iterations of the first want spans, in order
	}{
		{"finished iterations go", pending(0, 0, 1, 0, 2, 1), 2, time.Time{}, time.Time{}, 4, []int64{0, 0, 1, 1}},
		{"within Interval/4 of the last request they wait", pending(0, 0, 1, 0, 2), 2, now.Add(-100 * time.Millisecond), time.Time{}, 0, nil},
		{"after Interval/4 they go", pending(0, 0, 1, 0, 2), 2, now.Add(-300 * time.Millisecond), time.Time{}, 3, []int64{0, 0, 1}},
		{"the running iteration waits", pending(0, 3, 3, 3), 3, time.Time{}, time.Time{}, 0, nil},
		{"the running iteration goes after Interval", pending(sec, 3, 3, 3), 3, time.Time{}, time.Time{}, 3, []int64{3, 3, 3}},
		{"a full batch of the running one goes at once", pending(0, 3, 3, 3, 3, 3), 3, now, time.Time{}, 4, []int64{3, 3, 3, 3}},
		{"held back, nothing goes", pending(sec, 0, 1), 2, time.Time{}, now.Add(time.Second), 0, nil},
		{"nothing waits", nil, 0, time.Time{}, time.Time{}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newSpanRecorder(New(Options{}), "p", SpanOptions{Batch: 4, Interval: time.Second})
			s := sender{r: r, pending: tt.pending, last: tt.last, hold: tt.hold}
			got := s.readyCount(now, nowNS, tt.cur)
			if got != tt.want {
				t.Fatalf("readyCount = %d, want %d", got, tt.want)
			}
			for i, it := range tt.first {
				if s.pending[i].iter != it {
					t.Errorf("pending[%d] is of iteration %d, want %d (order %+v)", i, s.pending[i].iter, it, s.pending)
				}
			}
		})
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
