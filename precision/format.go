package precision

import (
	"fmt"
	"math"
	"strings"
)

// Format is a number format of a stored or computed value.
type Format uint8

// The formats, from the most accurate to the least. The zero Format is
// FP32, the default of every stage.
const (
	FP32 Format = iota
	FP16
	BF16
	INT8
	FP8E4M3
	INT4
	numFormats
)

var names = [numFormats]string{"fp32", "fp16", "bf16", "int8", "fp8_e4m3", "int4"}

// Formats lists every format in order, the most accurate first.
func Formats() []Format {
	fs := make([]Format, numFormats)
	for i := range fs {
		fs[i] = Format(i)
	}
	return fs
}

func (f Format) String() string {
	if f < numFormats {
		return names[f]
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// Valid reports whether f is one of the formats.
func (f Format) Valid() bool { return f < numFormats }

// Order is f's rank from the most accurate (0); it is the ordinal a search
// moves along.
func (f Format) Order() int { return int(f) }

// ParseFormat reads a format name, case-insensitively ("fp8" and "e4m3"
// name FP8 E4M3).
func ParseFormat(s string) (Format, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch t {
	case "fp8", "e4m3", "fp8e4m3":
		return FP8E4M3, nil
	case "float32", "f32":
		return FP32, nil
	case "float16", "half", "f16":
		return FP16, nil
	case "bfloat16":
		return BF16, nil
	}
	for i, n := range names {
		if t == n {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("precision %q: want one of %s", s, strings.Join(names[:], ", "))
}

// Bits is the storage width of one value.
func (f Format) Bits() int {
	switch f {
	case FP32:
		return 32
	case FP16, BF16:
		return 16
	case INT8, FP8E4M3:
		return 8
	case INT4:
		return 4
	}
	return 0
}

// IsFloat reports whether f is a floating-point format (no scale needed).
func (f Format) IsFloat() bool { return f == FP32 || f == FP16 || f == BF16 || f == FP8E4M3 }

// floatSpec describes a binary floating-point format.
type floatSpec struct {
	mant     int     // stored fraction bits
	emin     int     // exponent of the smallest normal
	maxFin   float64 // largest finite value
	saturate bool    // overflow gives ±maxFin (E4M3) instead of ±Inf
}

var specs = map[Format]floatSpec{
	FP32:    {mant: 23, emin: -126, maxFin: math.MaxFloat32},
	FP16:    {mant: 10, emin: -14, maxFin: 65504},
	BF16:    {mant: 7, emin: -126, maxFin: 0x1.fep127},
	FP8E4M3: {mant: 3, emin: -6, maxFin: 448, saturate: true},
}

// UnitRoundoff is the largest relative error of rounding a value in f's
// normal range to nearest: 2^-(mant+1). For INT8 and INT4 it is the error
// relative to the scale's largest value (half a step of 127 or 7 steps).
func (f Format) UnitRoundoff() float64 {
	switch f {
	case INT8:
		return 0.5 / 127
	case INT4:
		return 0.5 / 7
	}
	s, ok := specs[f]
	if !ok {
		return math.NaN()
	}
	return math.Ldexp(1, -(s.mant + 1))
}

// MaxFinite is the largest finite value of a float format (the largest
// integer for INT8 and INT4, before scaling).
func (f Format) MaxFinite() float64 {
	switch f {
	case INT8:
		return 127
	case INT4:
		return 7
	}
	return specs[f].maxFin
}

// SmallestNormal is the smallest positive normal value of a float format.
func (f Format) SmallestNormal() float64 { return math.Ldexp(1, specs[f].emin) }

// Round gives x's value in f, rounded to nearest, ties to even. For INT8
// and INT4 it is the identity: they need a scale (Quantize).
func (f Format) Round(x float32) float32 {
	switch f {
	case FP32, INT8, INT4:
		return x
	case BF16:
		return DecodeBF16(EncodeBF16(x))
	case FP16:
		return DecodeFP16(EncodeFP16(x))
	}
	return float32(roundFloat(float64(x), specs[f]))
}

// roundFloat rounds x (exact in float64) to the format s, nearest even.
func roundFloat(x float64, s floatSpec) float64 {
	if x == 0 || math.IsNaN(x) {
		return x
	}
	if math.IsInf(x, 0) {
		if s.saturate {
			return math.Copysign(s.maxFin, x)
		}
		return x
	}
	_, exp := math.Frexp(x) // |x| = frac * 2^exp, frac in [0.5, 1)
	e := max(exp-1, s.emin)
	q := math.Ldexp(1, e-s.mant) // the spacing of values in x's binade
	r := math.RoundToEven(x/q) * q
	if math.Abs(r) > s.maxFin {
		if s.saturate {
			return math.Copysign(s.maxFin, x)
		}
		return math.Copysign(math.Inf(1), x)
	}
	return r
}
