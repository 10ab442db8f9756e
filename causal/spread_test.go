package causal

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// forkJoinIterations repeats the fork-join graph, b taking bDur[it] ns in
// iteration it; each iteration's a waits for the previous d.
func forkJoinIterations(bDur []int64) []Span {
	var spans []Span
	var t int64
	for it, b := range bDur {
		id := uint64(it * 10)
		a := sp(id+1, "a", "s1", t, t+100)
		bb := sp(id+2, "b", "s1", t+100, t+100+b)
		c := sp(id+3, "c", "s2", t+110, t+210, id+1)
		d := sp(id+4, "d", "s1", t+100+b, t+150+b, id+3)
		if it > 0 {
			a.Deps = []uint64{id - 6} // the previous iteration's d
		}
		for _, s := range []*Span{&a, &bb, &c, &d} {
			s.Iteration = it
		}
		spans = append(spans, a, bb, c, d)
		t += 150 + b
	}
	return spans
}

func TestSpreadOverIterations(t *testing.T) {
	bDur := []int64{300, 200, 400, 300, 240}
	spans := forkJoinIterations(bDur)
	got, err := Spread(spans, SpreadOptions{RNG: rand.New(rand.NewPCG(1, 2))})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[1].Kernel != "b" || got[2].Kernel != "c" {
		t.Fatalf("kernels %+v", got)
	}
	// b is on the critical path of every iteration: its influence there
	// is its share b/(150+b).
	want := make([]float64, len(bDur))
	for k, b := range bDur {
		want[k] = float64(b) / float64(150+b)
	}
	b := got[1].Influence
	sorted := []float64{want[1], want[4], want[0], want[3], want[2]}
	if b.N != 5 || !near(b.Min, sorted[0]) || !near(b.Max, sorted[4]) || !near(b.Median, sorted[2]) ||
		!near(b.Q1, sorted[1]) || !near(b.Q3, sorted[3]) {
		t.Errorf("b influence %+v, want order statistics of %v", b, sorted)
	}
	if !(b.Lo >= b.Min && b.Lo <= b.Median && b.Hi >= b.Median && b.Hi <= b.Max && b.Lo < b.Hi) {
		t.Errorf("bootstrap interval [%v, %v] around median %v", b.Lo, b.Hi, b.Median)
	}
	if c := got[2].Influence; c.Max != 0 || c.N != 5 {
		t.Errorf("c is off the critical path in every iteration: %+v", c)
	}
	// c ends at 210, d waits for b until 100+b: c's slack is b-110.
	if sl := got[2].Slack; sl.N != 5 || sl.Min != 90 || sl.Median != 190 || sl.Max != 290 || sl.Q1 != 130 || got[1].Slack.Max != 0 {
		t.Errorf("slack of c %+v, of b %+v; want 90, 130, 190, 190, 290 and 0", sl, got[1].Slack)
	}
	again, _ := Spread(spans, SpreadOptions{RNG: rand.New(rand.NewPCG(1, 2))})
	if again[1].Influence != b {
		t.Errorf("same seed, different estimate: %+v and %+v", again[1].Influence, b)
	}
	if _, err := Spread(spans, SpreadOptions{}); err == nil {
		t.Error("Spread without an RNG: no error")
	}
}

func TestQuantile(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	for q, want := range map[float64]float64{0: 1, 0.25: 1.75, 0.5: 2.5, 0.75: 3.25, 1: 4} {
		if got := quantile(v, q); !near(got, want) {
			t.Errorf("quantile(%v) = %v, want %v", q, got, want)
		}
	}
	if quantile([]float64{7}, 0.5) != 7 {
		t.Error("quantile of one value")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestMedianOfCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		n := 1 + rng.IntN(9)
		sorted := make([]float64, n)
		for i := range sorted {
			sorted[i] = float64(i) + rng.Float64()
		}
		count := make([]int, n)
		var resample []float64
		for range n {
			k := rng.IntN(n)
			count[k]++
			resample = append(resample, sorted[k])
		}
		slices.Sort(resample)
		if got, want := medianOfCounts(sorted, count), quantile(resample, 0.5); !near(got, want) {
			t.Fatalf("medianOfCounts(%v, %v) = %v, median of the resample %v", sorted, count, got, want)
		}
	}
}

func TestSpreadSameSeedSameAnswer(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	bDur := make([]int64, 40)
	for i := range bDur {
		bDur[i] = 100 + 20*int64(rng.IntN(40))
	}
	spans := forkJoinIterations(bDur)
	run := func(seed uint64) []KernelSpread {
		out, err := Spread(spans, SpreadOptions{RNG: rand.New(rand.NewPCG(seed, 0)), Resamples: 200})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := run(1)
	for range 5 {
		if again := run(1); !reflect.DeepEqual(again, first) {
			t.Fatal("same seed, different spread")
		}
	}
	if reflect.DeepEqual(run(2), first) {
		t.Fatal("another seed, the same intervals: the bootstrap does not use the RNG")
	}
}

func TestBootstrap(t *testing.T) {
	if _, err := Bootstrap(nil, SpreadOptions{RNG: rand.New(rand.NewPCG(1, 1))}); err == nil {
		t.Fatal("no values: no error")
	}
	if _, err := Bootstrap([]float64{1}, SpreadOptions{}); err == nil {
		t.Fatal("no RNG: no error")
	}
	v := []float64{1000}
	for x := 19; x >= 1; x-- {
		v = append(v, float64(x))
	}
	e, err := Bootstrap(v, SpreadOptions{RNG: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	if e.N != 20 || e.Median != 10.5 || e.Min != 1 || e.Max != 1000 {
		t.Fatalf("estimate %+v", e)
	}
	// The interval of the median holds the median and the outlier cannot
	// drag it far: it stays among the ordinary values.
	if !(e.Lo <= e.Median && e.Median <= e.Hi && e.Lo >= 1 && e.Hi <= 19) {
		t.Fatalf("interval [%v, %v] around %v", e.Lo, e.Hi, e.Median)
	}
}

// TestSpreadIterations: iterations recorded on clocks that overlap (two
// processes) are summarised together; critical share, the tuned gain and
// the end-to-end time come out exactly where every iteration agrees.
func TestSpreadIterations(t *testing.T) {
	// Both iterations: a (100 ns) then b (300 ns) on s1, c (100 ns) on s2
	// after a; d (50 ns) on s1 after b and c. Same times in both.
	iter := func(it int) []Span {
		a := sp(1, "a", "s1", 0, 100)
		b := sp(2, "b", "s1", 100, 400)
		c := sp(3, "c", "s2", 110, 210, 1)
		d := sp(4, "d", "s1", 400, 450, 3)
		out := []Span{a, b, c, d}
		for i := range out {
			out[i].Iteration = it
		}
		return out
	}
	iters := [][]Span{iter(0), iter(0)} // same ids and times: two processes
	if err := Validate(append(iter(0), iter(0)...)); err == nil {
		t.Fatal("the two iterations together validate; the test needs them not to")
	}
	tuned := map[string][]Change{"b": {{Kernel: "b", Scale: 0.5}}, "c": {{Kernel: "c", Scale: 0.5}}}
	got, err := SpreadIterations(iters, SpreadOptions{RNG: rand.New(rand.NewPCG(1, 2)), Tuned: tuned})
	if err != nil {
		t.Fatal(err)
	}
	if got.Iterations != 2 || got.EndToEnd.Median != 450 || got.EndToEnd.Lo != 450 || got.EndToEnd.Hi != 450 {
		t.Errorf("iterations %d, end to end %+v, want 2 and 450 ns", got.Iterations, got.EndToEnd)
	}
	byName := map[string]KernelSpread{}
	for _, k := range got.Kernels {
		byName[k.Kernel] = k
	}
	// Critical path a, b, d: 450 of 450 ns; b holds 300 of it.
	if c := byName["b"].Critical; !near(c.Median, 300.0/450) || c.N != 2 {
		t.Errorf("b critical %+v, want 300/450", c)
	}
	if c := byName["c"].Critical; c.Max != 0 {
		t.Errorf("c critical %+v, want 0", c)
	}
	// b at half its time: d starts at 250, ends at 300: 150 of 450 saved.
	if g := byName["b"].Gain; g == nil || !near(g.Median, 150.0/450) {
		t.Errorf("b gain %+v, want 150/450", g)
	}
	if g := byName["c"].Gain; g == nil || g.Max != 0 {
		t.Errorf("c gain %+v, want 0 (off the critical path)", g)
	}
	if g := byName["a"].Gain; g != nil {
		t.Errorf("a gain %+v, want none (not tuned)", g)
	}
	// A bad iteration is named.
	bad := iter(3)
	bad[1].End = 50
	if _, err := SpreadIterations([][]Span{iter(0), bad}, SpreadOptions{RNG: rand.New(rand.NewPCG(1, 2))}); err == nil || err.Error() != "iteration 3 (#1): span 1: end_ns: ends before it starts (start 100, end 50)" {
		t.Errorf("bad iteration: %v", err)
	}
}
