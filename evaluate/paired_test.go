package evaluate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Two synthetic kernels of known cost (3 ms and 1 ms, a true ratio of 3)
// measured in paired rounds under a load that changes from round to round
// (each round's times scaled by a factor from 1 to 4, and noise of 5% on
// each): the interval covers 3 in at least 93 of 100 experiments, and is
// far narrower than the load's spread.
func TestPairedRatioCoversUnderLoad(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	covered, widest := 0, 0.0
	for range 100 {
		var base, cand []float64
		for range 6 {
			load := 1 + 3*rng.Float64() // injected load of this round
			noise := func() float64 { return 1 + 0.05*rng.NormFloat64() }
			base = append(base, 3*load*noise())
			cand = append(cand, 1*load*noise())
		}
		r := PairedRatio(base, cand)
		if r.Rounds != 6 || !(r.Low <= r.Ratio && r.Ratio <= r.High) {
			t.Fatalf("ratio %+v", r)
		}
		if r.Low <= 3 && 3 <= r.High {
			covered++
		}
		widest = max(widest, r.High/r.Low)
	}
	if covered < 93 {
		t.Errorf("the interval covered the true ratio 3 in %d of 100 experiments, want >= 93", covered)
	}
	if widest > 1.5 {
		t.Errorf("widest interval spans %.2fx: the load did not cancel", widest)
	}
	// Unpaired, the same load leaves the ratio of the medians anywhere
	// between 0.75 and 12: what pairing removes.
}

func TestPairedRatioEdges(t *testing.T) {
	if r := PairedRatio(nil, nil); r != (Ratio{}) {
		t.Errorf("no rounds: %+v", r)
	}
	if r := PairedRatio([]float64{2, 0, math.Inf(1)}, []float64{1, 1, 1}); r.Rounds != 1 || r.Ratio != 2 || r.Low != 2 || r.High != 2 {
		t.Errorf("one usable round: %+v", r)
	}
	if r := PairedRatio([]float64{2, 2, 2}, []float64{1, 1, 1}); math.Abs(r.Ratio-2) > 1e-12 || math.Abs(r.High-r.Low) > 1e-12 {
		t.Errorf("identical rounds: %+v", r)
	}
}
