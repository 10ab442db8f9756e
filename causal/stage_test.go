package causal

import (
	"math/rand/v2"
	"testing"
)

// builtinLike is the builtin pipeline's shape (internal/pipeline):
// conv2d at two problems on two streams at once, the big one and a reduce
// on the critical path; iteration it's small conv takes small[it] ns.
func builtinLike(small []int64) []Span {
	var spans []Span
	for it, s := range small {
		id := uint64(it * 10)
		big := sp(id+1, "conv2d", "a", 0, 1000)
		sm := sp(id+2, "conv2d", "b", 0, s)
		mm := sp(id+3, "sgemm", "b", s, s+100)
		red := sp(id+4, "reduce", "a", 1000, 1050, id+2)
		big.Problem, sm.Problem, mm.Problem, red.Problem = "512,512,7", "256,256,5", "128,128,128", "2097152"
		for _, x := range []*Span{&big, &sm, &mm, &red} {
			x.Iteration = it
			x.Start += int64(it) * 2000
			x.End += int64(it) * 2000
			spans = append(spans, *x)
		}
	}
	return spans
}

// TestStagesOfOneKernel: two stages running one kernel are two rows, each
// with its own share (never above 1), influence, slack and gain.
func TestStagesOfOneKernel(t *testing.T) {
	spans := builtinLike([]int64{200, 300, 250})
	if got := SplitKernels(spans); len(got) != 1 || !got["conv2d"] {
		t.Fatalf("SplitKernels = %v, want conv2d", got)
	}
	tuned := map[string][]Change{"conv2d": {
		{Kernel: "conv2d", Problem: "512,512,7", Scale: 0.5},
		{Kernel: "conv2d", Problem: "256,256,5", Scale: 0.5},
	}}
	ks, err := Spread(spans, SpreadOptions{RNG: rand.New(rand.NewPCG(1, 1)), Resamples: 10, Tuned: tuned})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		kernel, problem   string
		share, infl, gain float64
		slack             float64
	}
	want := []row{
		// The small conv may grow until sgemm after it ends at 1050.
		{"conv2d", "256,256,5", 250.0 / 1050, 0, 0, 950 - 250},
		{"conv2d", "512,512,7", 1000.0 / 1050, 1000.0 / 1050, 500.0 / 1050, 0},
		// 5% of 50 ns rounds to 48, a slope of 2/1050/0.05; on the critical
		// path, its influence is at least its share (the slope at 0).
		{"reduce", "", 50.0 / 1050, 50.0 / 1050, 0, 0},
		{"sgemm", "", 100.0 / 1050, 0, 0, 950 - 250},
	}
	if len(ks) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(ks), len(want), ks)
	}
	for i, w := range want {
		k := ks[i]
		gain := 0.0
		if k.Gain != nil {
			gain = k.Gain.Median
		}
		if k.Kernel != w.kernel || k.Problem != w.problem || !near(k.Share.Median, w.share) ||
			!near(k.Influence.Median, w.infl) || !near(gain, w.gain) || k.Slack.Median != w.slack {
			t.Errorf("row %d = %s@%s share %v influence %v gain %v slack %v, want %+v",
				i, k.Kernel, k.Problem, k.Share.Median, k.Influence.Median, gain, k.Slack.Median, w)
		}
	}
	// One kernel at many problems on one stream (a host thread's launch
	// calls, a layer's GEMMs) stays one row.
	one := []Span{sp(1, "gemm", "s", 0, 10), sp(2, "gemm", "s", 10, 20)}
	one[0].Problem, one[1].Problem = "a", "b"
	if got := SplitKernels(one); len(got) != 0 {
		t.Errorf("SplitKernels(one stream) = %v, want none", got)
	}
}
