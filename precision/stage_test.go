package precision

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestStageRank(t *testing.T) {
	tests := []struct {
		stage Stage
		value string
		want  int
		ok    bool
	}{
		{StageInput, "fp32", 0, true},
		{StageInput, "half", 1, true},
		{StageInput, "bf16", 2, true},
		{StageInput, "int8", 3, true},
		{StageInput, "fp8_e4m3", 4, true},
		{StageInput, "int4", 5, true},
		{StageInput, "fp64", 0, false},
		{StageInput, "kahan", 0, false},
		{StageAccumulation, "float64", 0, true},
		{StageAccumulation, "kahan", 1, true},
		{StageAccumulation, "float32", 2, true},
		{StageAccumulation, "fp16", 3, true},
		{StageAccumulation, "bf16", 4, true},
		{StageAccumulation, "int8", 0, false},
		{StageAccumulation, "fp8", 0, false},
		{StageOutput, "fp17", 0, false},
	}
	for _, tt := range tests {
		got, err := tt.stage.Rank(tt.value)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("%s.Rank(%q) = %d, %v; want %d, ok %v", tt.stage, tt.value, got, err, tt.want, tt.ok)
		}
	}
	// Names are in rank order and each ranks as listed.
	for _, s := range Stages() {
		for i, n := range s.Names() {
			if r, err := s.Rank(n); err != nil || r != i {
				t.Errorf("%s.Rank(%q) = %d, %v; want %d", s, n, r, err, i)
			}
		}
	}
}

func TestParseStage(t *testing.T) {
	for _, s := range Stages() {
		if g, err := ParseStage(s.String()); err != nil || g != s {
			t.Errorf("ParseStage(%q) = %v, %v", s.String(), g, err)
		}
	}
	if g, err := ParseStage("acc"); err != nil || g != StageAccumulation {
		t.Errorf("ParseStage(acc) = %v, %v", g, err)
	}
	if _, err := ParseStage("storage"); err == nil {
		t.Error("ParseStage(storage) succeeded")
	}
}

func TestCheckOrder(t *testing.T) {
	if err := StageInput.CheckOrder([]string{"fp32", "bf16", "int4"}); err != nil {
		t.Errorf("ordered: %v", err)
	}
	for _, bad := range [][]string{{"fp16", "fp32"}, {"fp32", "float32"}, {"fp32", "fp17"}} {
		if err := StageInput.CheckOrder(bad); err == nil {
			t.Errorf("CheckOrder(%q) succeeded", bad)
		}
	}
	if err := StageAccumulation.CheckOrder([]string{"float64", "kahan", "float32", "fp16", "bf16"}); err != nil {
		t.Errorf("accumulators: %v", err)
	}
}

// TestStoreErrorHolds rounds random values, normal and subnormal, scaled
// and not, and checks each error against Store's bound.
func TestStoreErrorHolds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0))
	for _, f := range []Format{FP16, BF16, FP8E4M3} {
		for _, scale := range []float64{1, 0x1p-8, 0x1p-15} {
			se := f.Store(scale)
			for range 20000 {
				// Magnitudes from 2^-40 to 1, so subnormals of every format occur.
				x := float32(math.Ldexp(rng.Float64()*2-1, -rng.IntN(40)))
				xs := float32(float64(x) / scale)
				if math.Abs(float64(xs)) > f.MaxFinite() {
					continue // the kernel's scale keeps values in range
				}
				got := float64(f.Round(xs)) * scale
				e := math.Abs(got - float64(x))
				if lim := se.Rel*math.Abs(float64(x)) + se.Abs; e > lim {
					t.Fatalf("%s scale %g: x %g stored as %g, err %g > bound %g", f, scale, x, got, e, lim)
				}
			}
		}
	}
	for _, f := range []Format{INT8, INT4} {
		xs := make([]float32, 4096)
		for i := range xs {
			xs[i] = float32(rng.Float64()*2-1) * float32(math.Ldexp(1, rng.IntN(20)-10))
		}
		q := make([]int8, len(xs))
		scales, err := Quantize(f, q, xs, 64)
		if err != nil {
			t.Fatal(err)
		}
		back := make([]float32, len(xs))
		Dequantize(back, q, scales, 64)
		for i, x := range xs {
			se := f.Store(float64(scales[i/64]))
			e := math.Abs(float64(back[i]) - float64(x))
			if lim := se.Rel*math.Abs(float64(x)) + se.Abs; e > lim {
				t.Fatalf("%s: x %g stored as %g, err %g > bound %g", f, x, back[i], e, lim)
			}
		}
	}
}

func TestSumBound(t *testing.T) {
	// ((1+rel)(1+acc) - 1)·Σ|x| + (1+acc)·Σabs, split into its two stages.
	b := Sum(100, 0x1p-11, 0.5, 0x1p-10)
	want := ((1+0x1p-11)*(1+0x1p-10)-1)*100 + (1+0x1p-10)*0.5
	if d := math.Abs(b.Total() - want); d > 1e-15 {
		t.Errorf("Sum total = %g, want %g", b.Total(), want)
	}
	if b.Input != 0x1p-11*100+0.5 {
		t.Errorf("Sum input = %g", b.Input)
	}
	if g := Gamma(3, 0.25); !math.IsInf(g, 1) && g != 3 {
		t.Errorf("Gamma(3, 1/4) = %g, want 3", g)
	}
	if g := Gamma(4, 0.25); !math.IsInf(g, 1) {
		t.Errorf("Gamma(4, 1/4) = %g, want +Inf", g)
	}
}
