package causal

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/quasim/quasim/causal/causaltest"
)

// profileTrace imports a trace and summarises it as causal show does:
// one graph per iteration, medians over them.
func profileTrace(t *testing.T, data []byte) ([]Span, ChromeReport, map[string]KernelSpread) {
	t.Helper()
	spans, rep, err := ImportChrome(data, "p")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := SpreadIterations(Iterations(spans), SpreadOptions{RNG: rand.New(rand.NewPCG(1, 0)), Resamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]KernelSpread{}
	for _, k := range ps.Kernels {
		out[k.Kernel] = k
	}
	return spans, rep, out
}

// TestImportForkJoinWithoutMarkers is issue 27's trace: a fork-join
// repeated 50 times with host time between iterations and no
// ProfilerStep markers (synthetic, causaltest.ForkJoin).
func TestImportForkJoinWithoutMarkers(t *testing.T) {
	tr := causaltest.Make(causaltest.ForkJoin())
	_, _, got := profileTrace(t, tr.JSON)
	want := map[string]float64{"A": 2.0 / 3, "B": 0, "C": 1.0 / 3}
	for k, w := range want {
		if g := got[k].Influence.Median; math.Abs(g-w) > 0.05 {
			t.Errorf("influence of %s = %.3f, want %.3f ± 0.05", k, g, w)
		}
	}
}

// TestImportRandomIterations draws pipelines of random stage times and
// stream layouts, with and without the host thread and the join flows,
// and checks each kernel's influence against the truth of its iterations.
func TestImportRandomIterations(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	for c := range 60 {
		tr := causaltest.Random(rng)
		res := causaltest.Make(tr)
		_, _, got := profileTrace(t, res.JSON)
		for _, k := range res.Kernels {
			w, _ := res.Median(k)
			if g := got[k].Influence.Median; math.Abs(g-w) > 0.05 {
				t.Errorf("case %d (%d stages, %d iterations, host %v, join flows %v): influence of %s = %.3f, want %.3f ± 0.05",
					c, len(tr.Stages), tr.Iters, tr.Host, tr.JoinFlows, k, g, w)
			}
		}
	}
}
