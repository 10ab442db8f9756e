package runtime

import (
	"sync"
	"testing"
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
