package pipeline

import (
	"testing"

	"github.com/quasim/quasim/causal"
)

func TestHeadroom(t *testing.T) {
	for _, c := range []struct{ def, best, want float64 }{
		{10, 4, 0.6}, {10, 10, 0}, {10, 12, 0}, {0, 4, PriorHeadroom}, {10, 0, PriorHeadroom},
	} {
		if got := Headroom(c.def, c.best); got != c.want {
			t.Errorf("Headroom(%v, %v) = %v, want %v", c.def, c.best, got, c.want)
		}
	}
}

func TestSplit(t *testing.T) {
	// One kernel on the critical path, one off it: the whole budget goes
	// to the one whose speedup shows end to end.
	got := Split([]Candidate{{Job: "sgemm", Influence: 0, Headroom: 0.5}, {Job: "conv", Influence: 0.7, Headroom: 0.5}}, 16)
	if got[0].Job != "conv" || got[0].Evals != 16 || got[1].Evals != 0 || got[0].Gain != 0.35 {
		t.Fatalf("split %+v", got)
	}
	// Proportional, by largest remainder, summing to the total.
	got = Split([]Candidate{{Job: "a", Influence: 1, Headroom: 0.1}, {Job: "b", Influence: 1, Headroom: 0.2}, {Job: "c", Influence: 0.5, Headroom: 0.4}}, 10)
	sum := 0
	for _, s := range got {
		sum += s.Evals
	}
	if sum != 10 || got[0].Job != "b" || got[1].Job != "c" || got[2].Job != "a" || got[0].Evals != 4 || got[1].Evals != 4 || got[2].Evals != 2 {
		t.Fatalf("split %+v", got)
	}
	// No gain anywhere: even, in job order.
	got = Split([]Candidate{{Job: "b"}, {Job: "a", Influence: -0.2, Headroom: 1}, {Job: "c", Influence: 1, Headroom: 0}}, 7)
	if got[0].Job != "a" || got[0].Evals != 3 || got[1].Evals != 2 || got[2].Evals != 2 {
		t.Fatalf("even split %+v", got)
	}
	// A Min: the job off the critical path still gets its least, from the
	// largest share; Mins beyond the total give what there is.
	got = Split([]Candidate{{Job: "sgemm", Influence: 0, Headroom: 0.5, Min: 2}, {Job: "conv", Influence: 0.7, Headroom: 0.5, Min: 2}}, 16)
	if got[0].Job != "conv" || got[0].Evals != 14 || got[0].Raised || got[1].Evals != 2 || !got[1].Raised {
		t.Fatalf("split with Min %+v", got)
	}
	got = Split([]Candidate{{Job: "a", Influence: 1, Headroom: 1, Min: 3}, {Job: "b", Min: 3}}, 4)
	if got[0].Evals != 3 || got[1].Evals != 1 {
		t.Fatalf("split with Mins above the total %+v", got)
	}
	if got := Split(nil, 5); len(got) != 0 {
		t.Fatalf("no candidates: %+v", got)
	}
}

// The builtin pipeline's shape with known durations: the big convolution
// and the reduce carry the end-to-end time, the side branch none of it.
func TestInfluences(t *testing.T) {
	var spans []causal.Span
	for it := range 3 {
		base := int64(it * 100_000)
		id := uint64(it * 4)
		spans = append(spans,
			causal.Span{ID: id + 1, Pipeline: "p", Iteration: it, Kernel: "conv2d", Problem: "512,512,7", Stream: "a", Start: base, End: base + 9000},
			causal.Span{ID: id + 2, Pipeline: "p", Iteration: it, Kernel: "conv2d", Problem: "256,256,5", Stream: "b", Start: base, End: base + 1000},
			causal.Span{ID: id + 3, Pipeline: "p", Iteration: it, Kernel: "sgemm", Problem: "128,128,128", Stream: "b", Start: base + 1000, End: base + 2000},
			causal.Span{ID: id + 4, Pipeline: "p", Iteration: it, Kernel: "reduce", Problem: "2097152", Stream: "a", Start: base + 9000, End: base + 10000, Deps: []uint64{id + 2}},
		)
	}
	got, err := Influences(causal.Iterations(spans))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"conv2d|512,512,7": 0.9, "conv2d|256,256,5": 0, "sgemm|128,128,128": 0, "reduce|2097152": 0.1}
	for k, w := range want {
		if g, ok := got[k]; !ok || g < w-1e-9 || g > w+1e-9 {
			t.Errorf("%s: %v, want %v", k, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %v", got)
	}
}
