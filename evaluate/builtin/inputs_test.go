package builtin

import (
	"context"
	goruntime "runtime"
	"slices"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
)

// fakeTimer records the drop function instead of running it later.
type fakeTimer struct{ resets int }

func (f *fakeTimer) Reset(time.Duration) bool { f.resets++; return true }

// TestInputsDropped checks a problem's inputs go when their timer fires
// (an idle daemon held every problem's input data for good) and come back
// the same when used again.
func TestInputsDropped(t *testing.T) {
	t.Parallel()
	k := mustNew(t, "reduce", Options{Reps: evaluate.Reps{Warmup: -1, Min: 1, Max: 1}})
	var drops []func()
	timer := &fakeTimer{}
	k.after = func(d time.Duration, f func()) resetter {
		if d != keepInputs {
			t.Errorf("drop after %v, want %v", d, keepInputs)
		}
		drops = append(drops, f)
		return timer
	}
	p := problem(1 << 12)
	s, err := k.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Default()
	held := func() int {
		k.mu.Lock()
		defer k.mu.Unlock()
		return len(k.inputs)
	}
	for range 2 {
		if _, err := k.Evaluate(context.Background(), c, p); err != nil {
			t.Fatal(err)
		}
	}
	first := slices.Clone(k.cachedInputs(p).A)
	if held() != 1 || len(drops) != 1 || timer.resets != 2 {
		t.Fatalf("after 3 uses: %d inputs held, %d timers, %d resets; want 1, 1, 2", held(), len(drops), timer.resets)
	}
	drops[0]()
	if held() != 0 {
		t.Fatalf("inputs still held after their timer fired")
	}
	if again := k.cachedInputs(p).A; !slices.Equal(again, first) {
		t.Errorf("inputs made again differ from the first ones")
	}
	if held() != 1 || len(drops) != 2 {
		t.Errorf("after a use past the drop: %d held, %d timers; want 1, 2", held(), len(drops))
	}
	drops[0]() // a stale timer does not drop the new inputs
	if held() != 1 {
		t.Errorf("a stale timer dropped the inputs made after it")
	}
}

// BenchmarkInputsHeld reports the heap the builtin kernels hold after one
// evaluation of each of their default problems (held_MiB), and once the
// inputs' timers have fired (dropped_MiB).
//
//	go test ./evaluate/builtin -run '^$' -bench InputsHeld -benchtime 1x
func BenchmarkInputsHeld(b *testing.B) {
	heap := func() float64 {
		goruntime.GC()
		var m goruntime.MemStats
		goruntime.ReadMemStats(&m)
		return float64(m.HeapAlloc) / (1 << 20)
	}
	for range b.N {
		base := heap()
		var drops []func()
		var ks []*Kernel
		for _, name := range Kernels() {
			k := mustNew(b, name, Options{Reps: evaluate.Reps{Warmup: -1, Min: 1, Max: 1}})
			k.after = func(_ time.Duration, f func()) resetter { drops = append(drops, f); return &fakeTimer{} }
			for _, p := range k.DefaultProblems() {
				s, err := k.Space(p)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := k.Evaluate(context.Background(), s.Default(), p); err != nil {
					b.Fatal(err)
				}
			}
			ks = append(ks, k)
		}
		b.ReportMetric(heap()-base, "held_MiB")
		for _, f := range drops {
			f()
		}
		drops = nil // a fired timer lets go of its function
		b.ReportMetric(heap()-base, "dropped_MiB")
		goruntime.KeepAlive(ks)
	}
	b.ReportMetric(0, "ns/op")
}
