package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
)

// ONNX element types (TensorProto.DataType) the folding reads and writes.
const (
	tFloat, tUint8, tInt8, tUint16, tInt16, tInt32, tInt64 = 1, 2, 3, 4, 5, 6, 7
	tBool, tFloat16, tDouble, tUint32, tUint64, tBfloat16  = 9, 10, 11, 12, 13, 16
)

// maxFold bounds the elements of a constant the folding computes: shape
// arithmetic is small, and a model may not make the reader allocate much.
const maxFold = 1 << 16

// elemBits is the size of one element of each TensorProto.DataType, in
// bits; absent for types without a fixed size (undefined, string).
var elemBits = map[int64]int64{
	1: 32, 2: 8, 3: 8, 4: 16, 5: 16, 6: 32, 7: 64, 9: 8, 10: 16, 11: 64,
	12: 32, 13: 64, 14: 64, 15: 128, 16: 16, 17: 8, 18: 8, 19: 8, 20: 8,
	21: 4, 22: 4, 23: 4,
}

func isFloat(t int64) bool {
	return t == tFloat || t == tFloat16 || t == tDouble || t == tBfloat16
}

// cval is a constant tensor's value: integers (and booleans) as int64,
// floats as float64, row-major.
type cval struct {
	shape []int64
	float bool
	i     []int64
	f     []float64
}

func (c *cval) len() int {
	if c.float {
		return len(c.f)
	}
	return len(c.i)
}

// at is element k as a float64.
func (c *cval) at(k int) float64 {
	if c.float {
		return c.f[k]
	}
	return float64(c.i[k])
}

// ints is the value as integers (floats truncated, as Cast does).
func (c *cval) ints() []int64 {
	if !c.float {
		return c.i
	}
	out := make([]int64, len(c.f))
	for k, v := range c.f {
		out[k] = clampInt(v)
	}
	return out
}

func clampInt(v float64) int64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return int64(v)
}

func numel(shape []int64) (int64, bool) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, false
		}
		if d != 0 && n > math.MaxInt64/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// constFromTensor decodes a TensorProto's data, or returns nil when it
// is too big to fold, stored outside the file, or of a type folding does
// not handle; an error only for data that contradicts its dims.
func constFromTensor(t *tensor) (*cval, error) {
	n, ok := numel(t.dims)
	if !ok || n > maxFold || t.external {
		return nil, nil
	}
	if t.raw == nil && t.fdata == nil && t.idata == nil && t.ddata == nil {
		return nil, nil // no data (or a type folding does not read)
	}
	c := &cval{shape: append([]int64{}, t.dims...), float: isFloat(t.dtype)}
	bad := func(what string, got int) error {
		return fmt.Errorf("%s: %s holds %d elements, dims say %d", t.where, what, got, n)
	}
	switch {
	case t.raw != nil:
		eb, ok := elemBits[t.dtype]
		if !ok || eb < 8 {
			return nil, nil
		}
		size := int(eb / 8)
		if len(t.raw) != int(n)*size {
			return nil, bad("raw_data", len(t.raw)/size)
		}
		for k := 0; k < int(n); k++ {
			b := t.raw[k*size : (k+1)*size]
			switch t.dtype {
			case tFloat:
				c.f = append(c.f, float64(math.Float32frombits(binary.LittleEndian.Uint32(b))))
			case tDouble:
				c.f = append(c.f, math.Float64frombits(binary.LittleEndian.Uint64(b)))
			case tInt64, tUint64:
				c.i = append(c.i, int64(binary.LittleEndian.Uint64(b)))
			case tInt32:
				c.i = append(c.i, int64(int32(binary.LittleEndian.Uint32(b))))
			case tUint32:
				c.i = append(c.i, int64(binary.LittleEndian.Uint32(b)))
			case tInt16:
				c.i = append(c.i, int64(int16(binary.LittleEndian.Uint16(b))))
			case tUint16:
				c.i = append(c.i, int64(binary.LittleEndian.Uint16(b)))
			case tInt8:
				c.i = append(c.i, int64(int8(b[0])))
			case tUint8, tBool:
				c.i = append(c.i, int64(b[0]))
			default:
				return nil, nil // float16, bfloat16: not needed for shapes
			}
		}
	case c.float && t.dtype == tFloat:
		if len(t.fdata) != int(n) {
			return nil, bad("float_data", len(t.fdata))
		}
		for _, v := range t.fdata {
			c.f = append(c.f, float64(v))
		}
	case c.float && t.dtype == tDouble:
		if len(t.ddata) != int(n) {
			return nil, bad("double_data", len(t.ddata))
		}
		c.f = append(c.f, t.ddata...)
	case !c.float && t.dtype != 0 && t.dtype != 8:
		if len(t.idata) != int(n) {
			return nil, bad("int data", len(t.idata))
		}
		c.i = append(c.i, t.idata...)
	default:
		return nil, nil
	}
	if c.float && c.f == nil {
		c.f = []float64{}
	}
	if !c.float && c.i == nil {
		c.i = []int64{}
	}
	return c, nil
}
