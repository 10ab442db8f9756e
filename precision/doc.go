// Package precision holds the number formats a kernel stage may store or
// compute in, and exact conversions between them and float32.
//
// # Formats
//
// FP32 (IEEE binary32), FP16 (IEEE binary16), BF16 (bfloat16: the upper
// half of a binary32), FP8 E4M3 (OCP 8-bit floating point, v1.0: bias 7,
// no infinities, one NaN pattern per sign, largest finite 448), INT8 and
// INT4 (symmetric integers with a scale chosen by the kernel: values
// -127..127 and -7..7). Formats are ordered from the most accurate and
// costly to the least (Order), so a search may treat a precision
// parameter as ordinal.
//
// # Rounding
//
// Round(x) is the value of x in the format, rounded to nearest with ties
// to even, as IEEE 754 hardware rounds. A value past the largest finite
// one becomes an infinity in FP16 and BF16 (as IEEE rounding does: at or
// beyond max + half an ulp) and saturates to ±448 in E4M3 (the OCP
// specification's saturating conversion; E4M3 has no infinity, and ±Inf
// saturates too). NaN stays NaN. Subnormals are kept, never flushed.
// Encode and Decode give the formats' bit patterns.
//
// Integers: Quantize picks a scale per tensor or per block (the largest
// magnitude maps to the largest integer), rounds x/scale to nearest even
// and clamps. The error of one element is at most scale/2.
//
// # Stages
//
// A kernel's precision parameters each set one Stage: the storage of its
// inputs, of intermediates, its accumulators or its output. A stage's
// values rank from the most accurate (Stage.Rank): formats in Order, and
// for accumulation fp64 and kahan (compensated fp32) before FP32, FP16
// and BF16. A precision parameter keeps its values in rank order
// (Stage.CheckOrder), so a search that moves along value indices moves
// along accuracy and cost.
//
// # Error bounds
//
// UnitRoundoff is the largest relative error of one rounding to a float
// format (2^-p for p significand bits, normal range). Bounds for whole
// stages compose from it; they are the standard forward error bounds
// (Higham, Accuracy and Stability of Numerical Algorithms, ch. 2–4):
// Store bounds one stored value (relative plus subnormal or quantization
// step), Gamma an accumulation of depth d, Sum composes the two for a sum
// (((1+u_s)(1+γ_d) - 1)·Σ|x_i| + (1+γ_d)·Σ(absolute storage errors)),
// and Output adds a final rounding.
//
// The package does no I/O and keeps no state.
package precision
