package precision

import "math"

// Gamma is Higham's γ_k = k·u/(1-k·u), the bound on the relative error of
// a product of k factors (1+δ_i), |δ_i| <= u; +Inf once k·u >= 1, where it
// bounds nothing.
func Gamma(k int, u float64) float64 {
	ku := float64(k) * u
	if ku >= 1 {
		return math.Inf(1)
	}
	return ku / (1 - ku)
}

// Chain is the relative error bound of rounding in u after an operation
// bounded by e: (1+e)(1+u) - 1.
func Chain(e, u float64) float64 { return (1+e)*(1+u) - 1 }

// StoreError bounds the error of storing one float32 value x in f with the
// scale the kernel chose for it (the value stored is x/scale; scale 1
// when f needs none): |x̂ - x| <= Rel·|x| + Abs.
//
// A float format rounds to nearest: a relative error of at most its unit
// roundoff in its normal range, an absolute one of half its smallest
// subnormal spacing below it (times the scale, a power of two, so
// scaling is exact). FP32 stores a float32 exactly.
//
// INT8 and INT4 store q = round(fl(x/scale)) clamped to ±127 or ±7, read
// back as fl(q·scale): the integer is within 1/2 + 128·u32 of x/scale (the
// float32 division's rounding, and a clamp where fl(amax/127) came out a
// little low), and the product rounds once more, so Rel = u32 and
// Abs = scale·(1/2 + 2^-16).
type StoreError struct{ Rel, Abs float64 }

// u32 is float32's unit roundoff.
const u32 = 0x1p-24

// Store is the StoreError of f at scale.
func (f Format) Store(scale float64) StoreError {
	switch f {
	case FP32:
		return StoreError{}
	case INT8, INT4:
		return StoreError{Rel: u32, Abs: scale * (0.5 + 0x1p-16)}
	}
	s, ok := specs[f]
	if !ok {
		return StoreError{Rel: math.Inf(1), Abs: math.Inf(1)}
	}
	eta := math.Ldexp(1, s.emin-s.mant-1) // half the subnormal spacing
	return StoreError{Rel: f.UnitRoundoff(), Abs: eta * scale}
}

// SumBound is the a-priori bound of a sum s = Σx_i computed from stored
// values x̂_i (|x̂_i - x_i| <= rel·|x_i| + abs_i) by additions whose
// combined relative effect on any term is at most acc (γ_d of the
// accumulator's unit roundoff for a depth-d tree):
//
//	|ŝ - s| <= |Σx̂ - Σx| + |ŝ - Σx̂|
//	        <= (rel·Σ|x| + Σabs) + acc·((1+rel)·Σ|x| + Σabs)
//	         = ((1+rel)(1+acc) - 1)·Σ|x| + (1+acc)·Σabs
//
// Input is the first term, the stored values' error; Acc the second, the
// accumulation's.
type SumBound struct{ Input, Acc float64 }

// Sum composes the bound of a sum: sumAbs is Σ|x_i|, storeAbs Σ abs_i.
func Sum(sumAbs, rel, storeAbs, acc float64) SumBound {
	in := rel*sumAbs + storeAbs
	return SumBound{Input: in, Acc: acc * (sumAbs + in)}
}

// Total is the whole bound.
func (b SumBound) Total() float64 { return b.Input + b.Acc }

// Output is the bound of the final rounding of a result r to a format of
// unit roundoff u, where the exact result is s and r's error before the
// rounding is at most prior: u·|r| <= u·(|s| + prior).
func Output(u, s, prior float64) float64 { return u * (math.Abs(s) + prior) }
