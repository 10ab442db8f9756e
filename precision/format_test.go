package precision

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Every 16-bit pattern of FP16 and BF16 decodes and encodes back to
// itself; a NaN encodes to a NaN (exponent all ones, mantissa not zero).
func TestHalfFormatsRoundTripEveryValue(t *testing.T) {
	for _, f := range []struct {
		name      string
		decode    func(uint16) float32
		encode    func(float32) uint16
		exp, mant uint16
	}{
		{"fp16", DecodeFP16, EncodeFP16, 0x7c00, 0x3ff},
		{"bf16", DecodeBF16, EncodeBF16, 0x7f80, 0x7f},
	} {
		for i := range 1 << 16 {
			h := uint16(i)
			x := f.decode(h)
			if x != x {
				if g := f.encode(x); g&f.exp != f.exp || g&f.mant == 0 {
					t.Fatalf("%s: NaN %#04x encodes to %#04x, not a NaN", f.name, h, g)
				}
				continue
			}
			if g := f.encode(x); g != h {
				t.Fatalf("%s: %#04x -> %v -> %#04x", f.name, h, x, g)
			}
		}
	}
}

func TestE4M3RoundTripsEveryValue(t *testing.T) {
	for i := range 256 {
		b := uint8(i)
		x := DecodeE4M3(b)
		if b&0x7f == 0x7f {
			if x == x {
				t.Fatalf("%#02x decodes to %v, want NaN", b, x)
			}
			if g := EncodeE4M3(x); g != b {
				t.Fatalf("NaN %#02x encodes to %#02x", b, g)
			}
			continue
		}
		if g := EncodeE4M3(x); g != b {
			t.Fatalf("%#02x -> %v -> %#02x", b, x, g)
		}
	}
}

// TestE4M3Spec checks the examples of the OCP 8-bit floating point
// specification v1.0 (E4M3 column of its table of special values) and its
// saturating conversion.
func TestE4M3Spec(t *testing.T) {
	for _, c := range []struct {
		bits uint8
		v    float64
	}{
		{0x00, 0},                         // zero: S.0000.000
		{0x80, math.Copysign(0, -1)},      // negative zero
		{0x7e, 448},                       // max normal: S.1111.110 = 1.75 * 2^8
		{0xfe, -448},                      //
		{0x08, math.Ldexp(1, -6)},         // min normal: S.0001.000 = 2^-6
		{0x07, 0.875 * math.Ldexp(1, -6)}, // max subnormal: S.0000.111
		{0x01, math.Ldexp(1, -9)},         // min subnormal: S.0000.001 = 2^-9
		{0x38, 1},                         // 1.0: exponent 7 = bias
		{0x40, 2},
	} {
		if g := float64(DecodeE4M3(c.bits)); g != c.v || math.Signbit(g) != math.Signbit(c.v) {
			t.Errorf("decode %#02x = %v, want %v", c.bits, g, c.v)
		}
		if g := EncodeE4M3(float32(c.v)); g != c.bits {
			t.Errorf("encode %v = %#02x, want %#02x", c.v, g, c.bits)
		}
	}
	for _, c := range []struct {
		x    float32
		want uint8
	}{
		{464, 0x7e},                         // halfway to the NaN pattern's value: saturates, not NaN
		{500, 0x7e},                         // past the largest: saturates
		{float32(math.Inf(1)), 0x7e},        // no infinity: saturates
		{float32(math.Inf(-1)), 0xfe},       //
		{float32(math.NaN()), 0x7f},         // NaN
		{float32(math.Ldexp(1, -10)), 0x00}, // half the smallest subnormal: ties to even (0)
		{float32(math.Ldexp(3, -11)), 0x01}, // 0.75 of the smallest subnormal: up
		{float32(math.Ldexp(3, -10)), 0x02}, // 1.5 subnormals: ties to even (2)
		{1.0625, 0x38},                      // 1 + half an ulp (1/16): ties to even 1.0
		{1.1875, 0x3a},                      // 1 + 1.5 ulps: ties to even 1.25
		{-1.2, 0xba},                        // -1.25 (0.05 away) is nearer than -1.125 (0.075)
	} {
		if g := EncodeE4M3(c.x); g != c.want {
			t.Errorf("encode %v = %#02x, want %#02x", c.x, g, c.want)
		}
	}
}

// TestFastPathsMatchGeneric checks the bit-level FP16 and BF16 encoders
// against the generic rounding (float64 arithmetic, another method) on
// every binade's edges and random values.
func TestFastPathsMatchGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(x float32) {
		for _, f := range []Format{FP16, BF16} {
			want := roundFloat(float64(x), specs[f])
			got := float64(f.Round(x))
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) || math.Signbit(got) != math.Signbit(want) {
				t.Fatalf("%s.Round(%v [%#08x]) = %v, generic %v", f, x, math.Float32bits(x), got, want)
			}
		}
	}
	for e := range 256 {
		for _, m := range []uint32{0, 1, 0x1000, 0x0fff, 0x1001, 0x3000, 0x8000, 0x7fff, 0x8001, 0x18000, 0x7fffff, 0x7ff000, 0x7fefff} {
			b := uint32(e)<<23 | m
			check(math.Float32frombits(b))
			check(math.Float32frombits(b | 1<<31))
		}
	}
	for range 2_000_000 {
		check(math.Float32frombits(r.Uint32()))
	}
}

func TestRoundIsNearest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, f := range []Format{FP16, BF16, FP8E4M3} {
		for range 200_000 {
			x := float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
			got := f.Round(x)
			if math.Abs(float64(x)) > f.MaxFinite() { // overflow: Inf or saturation, checked elsewhere
				continue
			}
			err := math.Abs(float64(got) - float64(x))
			// Nearest: no error beyond half the spacing at x, which is
			// u*|x| in the normal range and half a subnormal step below it.
			lim := max(f.UnitRoundoff()*math.Abs(float64(x)), math.Ldexp(f.SmallestNormal(), -specs[f].mant-1))
			if err > lim*(1+1e-12) {
				t.Fatalf("%s.Round(%v) = %v: error %g > %g", f, x, got, err, lim)
			}
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats() {
		g, err := ParseFormat(f.String())
		if err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), g, err)
		}
	}
	if _, err := ParseFormat("fp4"); err == nil {
		t.Error("ParseFormat(fp4) gave no error")
	}
}

func TestQuantize(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, f := range []Format{INT8, INT4} {
		for _, block := range []int{0, 1, 7, 64} {
			src := make([]float32, 1000)
			for i := range src {
				src[i] = float32(r.NormFloat64() * 3)
			}
			q := make([]int8, len(src))
			scales, err := Quantize(f, q, src, block)
			if err != nil {
				t.Fatal(err)
			}
			back := make([]float32, len(src))
			Dequantize(back, q, scales, block)
			b := block
			if b <= 0 {
				b = len(src)
			}
			m := f.MaxFinite()
			for i := range src {
				if math.Abs(float64(q[i])) > m {
					t.Fatalf("%s: q[%d] = %d out of range", f, i, q[i])
				}
				s := float64(scales[i/b])
				if e := math.Abs(float64(back[i] - src[i])); e > s/2*(1+1e-6) {
					t.Fatalf("%s block %d: element %d error %g > scale/2 %g", f, block, i, e, s/2)
				}
			}
		}
	}
	if _, err := Quantize(INT8, make([]int8, 2), []float32{1, float32(math.NaN())}, 0); err == nil {
		t.Error("Quantize took a NaN")
	}
	if _, err := Quantize(FP16, make([]int8, 1), []float32{1}, 0); err == nil {
		t.Error("Quantize took a float format")
	}
}
