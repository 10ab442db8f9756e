package precision

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactSum is Σxs exactly: 2000 bits hold any sum of float64s of the
// magnitudes used here.
func exactSum(xs []float64) *big.Float {
	s := new(big.Float).SetPrec(2000)
	for _, x := range xs {
		s.Add(s, new(big.Float).SetFloat64(x))
	}
	return s
}

// TestThroughLinearHoldsOnPerturbedSums perturbs exact values x_i within
// up_i (worst-case signs and random fractions), sums the perturbed values
// in float32 as a recursive sum, bounds that sum's own error by
// γ_{n-1}·Σ|x̃_i| (Higham 4.2), and checks the composed bound against the
// exact error |ŝ - Σx_i| computed with big.Float: it always holds.
func TestThroughLinearHoldsOnPerturbedSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0))
	for trial := range 300 {
		n := 1 + rng.IntN(2000)
		x := make([]float64, n)
		up := make([]float64, n)
		xt := make([]float32, n)
		sumAbs := 0.0
		for i := range x {
			// Exact values representable in float32, so x̃ = x + δ is
			// known exactly after the perturbation's own rounding.
			x[i] = float64(float32(rng.Float64()*2 - 1))
			if trial%2 == 0 {
				x[i] = math.Abs(x[i])
			}
			up[i] = rng.Float64() * 1e-3 * math.Abs(x[i])
			d := up[i] * rng.Float64()
			if trial%3 == 0 {
				d = up[i] * 0.999 // worst case: every error of one sign
			} else if rng.IntN(2) == 0 {
				d = -d
			}
			xt[i] = float32(x[i] + d)
			// float32(x+d) may round past x+d: the upstream bound is of
			// the value it really produced.
			up[i] = math.Max(up[i], math.Abs(float64(xt[i])-x[i]))
			sumAbs += math.Abs(float64(xt[i]))
		}
		var s float32
		for _, v := range xt {
			s += v
		}
		own := Gamma(n-1, u32) * sumAbs
		c, err := ThroughLinear(nil, up, own)
		if err != nil {
			t.Fatal(err)
		}
		e := new(big.Float).Sub(new(big.Float).SetFloat64(float64(s)), exactSum(x))
		got, _ := e.Abs(e).Float64()
		if got > c.Total() {
			t.Fatalf("trial %d n %d: error %g beyond the composed bound %g (upstream %g, own %g)", trial, n, got, c.Total(), c.Upstream, c.Own)
		}
	}
}

// TestThroughLinearIsTight: with exact arithmetic downstream (own = 0;
// small integers sum exactly in float64) and every upstream error of one
// sign and full size, the error equals the composed bound.
func TestThroughLinearIsTight(t *testing.T) {
	x := []float64{3, -5, 8, 1}
	up := []float64{0.5, 0.25, 1, 0.125}
	coef := []float64{2, -1, 1, 4}
	var got, want float64
	for i := range x {
		got += coef[i]*(x[i]+math.Copysign(up[i], coef[i])) - coef[i]*x[i]
	}
	c, err := ThroughLinear(coef, up, 0)
	if err != nil {
		t.Fatal(err)
	}
	want = c.Total()
	if got != want || want != 2*0.5+0.25+1+4*0.125 {
		t.Errorf("error %g, composed bound %g", got, want)
	}
}

func TestThroughLinearErrors(t *testing.T) {
	for _, tt := range []struct {
		coef, up []float64
		own      float64
	}{
		{[]float64{1}, []float64{1, 2}, 0},
		{nil, []float64{-1}, 0},
		{nil, []float64{math.NaN()}, 0},
		{nil, nil, math.NaN()},
		{nil, nil, -1},
	} {
		if _, err := ThroughLinear(tt.coef, tt.up, tt.own); err == nil {
			t.Errorf("ThroughLinear(%v, %v, %v): no error", tt.coef, tt.up, tt.own)
		}
	}
}
