package precision

import (
	"fmt"
	"math"
)

// maxInt is the largest integer of a symmetric integer format.
func maxInt(f Format) (float32, error) {
	switch f {
	case INT8:
		return 127, nil
	case INT4:
		return 7, nil
	}
	return 0, fmt.Errorf("precision: %s is not an integer format", f)
}

// Scale is the scale Quantize picks for values whose largest magnitude is
// amax: amax maps to the largest integer. A zero or non-finite amax gives
// scale 1 (all zeros stay zeros; NaN and Inf are refused by Quantize).
func Scale(f Format, amax float32) float32 {
	m, err := maxInt(f)
	if err != nil || amax == 0 || math.IsInf(float64(amax), 0) || amax != amax {
		return 1
	}
	return amax / m
}

// Quantize stores src in dst as integers of format f with one scale per
// block of block values (block <= 0: one scale for the whole tensor), and
// returns the scales. q = clamp(round-to-even(x / scale)). It refuses NaN
// and Inf: an integer format cannot hold them.
func Quantize(f Format, dst []int8, src []float32, block int) ([]float32, error) {
	m, err := maxInt(f)
	if err != nil {
		return nil, err
	}
	if len(dst) < len(src) {
		return nil, fmt.Errorf("precision: quantize %d values into %d", len(src), len(dst))
	}
	if block <= 0 || block > len(src) {
		block = max(len(src), 1)
	}
	scales := make([]float32, 0, (len(src)+block-1)/block)
	for lo := 0; lo < len(src); lo += block {
		hi := min(lo+block, len(src))
		var amax float32
		for i, x := range src[lo:hi] {
			if x != x || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("precision: quantize: value %d is %v", lo+i, x)
			}
			amax = max(amax, float32(math.Abs(float64(x))))
		}
		s := Scale(f, amax)
		scales = append(scales, s)
		for i, x := range src[lo:hi] {
			q := float32(math.RoundToEven(float64(x / s)))
			dst[lo+i] = int8(min(max(q, -m), m))
		}
	}
	return scales, nil
}

// Dequantize is the inverse of Quantize: dst[i] = src[i] * scales[i/block].
func Dequantize(dst []float32, src []int8, scales []float32, block int) {
	if block <= 0 || block > len(src) {
		block = max(len(src), 1)
	}
	for i, q := range src {
		dst[i] = float32(q) * scales[i/block]
	}
}

// RoundSlice rounds every value of xs to f in place. For INT8 and INT4 it
// quantizes and dequantizes with a scale per block (block <= 0: one scale),
// so xs holds what a stage storing in f would read back.
func RoundSlice(f Format, xs []float32, block int) error {
	if f.IsFloat() {
		if f == FP32 {
			return nil
		}
		for i, x := range xs {
			xs[i] = f.Round(x)
		}
		return nil
	}
	q := make([]int8, len(xs))
	scales, err := Quantize(f, q, xs, block)
	if err != nil {
		return err
	}
	Dequantize(xs, q, scales, block)
	return nil
}
