package onnx

import (
	"math"
	"slices"
)

// Constant folding of the small tensors shape subgraphs compute. Each
// function returns nil when it cannot fold (too big, a type it does not
// handle); inference then keeps the shape without the value.

func newVal(shape []int64, float bool, n int) *cval {
	v := &cval{shape: slices.Clone(shape), float: float}
	if float {
		v.f = make([]float64, 0, n)
	} else {
		v.i = make([]int64, 0, n)
	}
	return v
}

// reshaped is v with a new shape of as many elements, or nil.
func reshaped(v *cval, shape []int64) *cval {
	if v == nil {
		return nil
	}
	if n, ok := numel(shape); !ok || n != int64(v.len()) {
		return nil
	}
	out := *v
	out.shape = slices.Clone(shape)
	return &out
}

func foldUnary(n *node, v *cval) *cval {
	if v == nil {
		return nil
	}
	out := newVal(v.shape, v.float, v.len())
	for k := range v.len() {
		if v.float {
			x := v.f[k]
			switch n.opType {
			case "Identity":
			case "Neg":
				x = -x
			case "Abs":
				x = math.Abs(x)
			case "Floor":
				x = math.Floor(x)
			case "Ceil":
				x = math.Ceil(x)
			case "Round":
				x = math.RoundToEven(x)
			case "Sqrt":
				x = math.Sqrt(x)
			case "Reciprocal":
				x = 1 / x
			default:
				return nil
			}
			out.f = append(out.f, x)
			continue
		}
		x := v.i[k]
		switch n.opType {
		case "Identity", "Floor", "Ceil", "Round":
		case "Neg":
			x = -x
		case "Abs":
			if x < 0 {
				x = -x
			}
		case "Not":
			x = 1 - min(max(x, 0), 1)
		case "Sign":
			x = int64(min(max(x, -1), 1))
		default:
			return nil
		}
		out.i = append(out.i, x)
	}
	return out
}

// bcastIndex maps each output element of shape out to the index of the
// element of in (broadcast to out) it reads.
func bcastIndex(in, out []int64) []int {
	n, _ := numel(out)
	idx := make([]int, n)
	off := len(out) - len(in)
	for k := range idx {
		rem, src, stride := k, 0, 1
		for a := len(out) - 1; a >= 0; a-- {
			c := rem % int(out[a])
			rem /= int(out[a])
			if a >= off {
				d := int(in[a-off])
				if d != 1 {
					src += c * stride
				}
				stride *= d
			}
		}
		idx[k] = src
	}
	return idx
}

func foldBinary(n *node, a, b *cval) *cval {
	sh, err := broadcast(a.shape, b.shape)
	if err != nil || sh == nil {
		return nil
	}
	cnt, ok := numel(sh)
	if !ok || cnt > maxFold {
		return nil
	}
	if cnt == 0 {
		return newVal(sh, a.float || b.float, 0)
	}
	ia, ib := bcastIndex(a.shape, sh), bcastIndex(b.shape, sh)
	if n.opType == "Expand" {
		out := newVal(sh, a.float, int(cnt))
		for k := range ia {
			if a.float {
				out.f = append(out.f, a.f[ia[k]])
			} else {
				out.i = append(out.i, a.i[ia[k]])
			}
		}
		return out
	}
	cmp := false
	switch n.opType {
	case "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor":
		cmp = true
	}
	float := (a.float || b.float) && !cmp
	out := newVal(sh, float, int(cnt))
	for k := range ia {
		if a.float || b.float {
			x, y := a.at(ia[k]), b.at(ib[k])
			var r float64
			switch n.opType {
			case "Add", "Sum":
				r = x + y
			case "Sub":
				r = x - y
			case "Mul":
				r = x * y
			case "Div":
				r = x / y
			case "Pow":
				r = math.Pow(x, y)
			case "Max":
				r = math.Max(x, y)
			case "Min":
				r = math.Min(x, y)
			case "Equal":
				r = b2f(x == y)
			case "Less":
				r = b2f(x < y)
			case "Greater":
				r = b2f(x > y)
			case "LessOrEqual":
				r = b2f(x <= y)
			case "GreaterOrEqual":
				r = b2f(x >= y)
			default:
				return nil
			}
			if cmp {
				out.i = append(out.i, int64(r))
			} else {
				out.f = append(out.f, r)
			}
			continue
		}
		x, y := a.i[ia[k]], b.i[ib[k]]
		var r int64
		switch n.opType {
		case "Add", "Sum":
			r = x + y
		case "Sub":
			r = x - y
		case "Mul":
			r = x * y
		case "Div":
			if y == 0 || (x == math.MinInt64 && y == -1) {
				return nil
			}
			r = x / y
		case "Mod":
			if y == 0 || (x == math.MinInt64 && y == -1) {
				return nil
			}
			r = x % y
			if n.attrInt("fmod", 0) == 0 && r != 0 && (r < 0) != (y < 0) {
				r += y
			}
		case "Max":
			r = max(x, y)
		case "Min":
			r = min(x, y)
		case "Equal":
			r = b2i(x == y)
		case "Less":
			r = b2i(x < y)
		case "Greater":
			r = b2i(x > y)
		case "LessOrEqual":
			r = b2i(x <= y)
		case "GreaterOrEqual":
			r = b2i(x >= y)
		case "And":
			r = b2i(x != 0 && y != 0)
		case "Or":
			r = b2i(x != 0 || y != 0)
		case "Xor":
			r = b2i((x != 0) != (y != 0))
		default:
			return nil
		}
		out.i = append(out.i, r)
	}
	return out
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func b2f(b bool) float64 { return float64(b2i(b)) }

func foldWhere(c, x, y *cval) *cval {
	sh, err := broadcast(c.shape, x.shape, y.shape)
	if err != nil || sh == nil || x.float != y.float {
		return nil
	}
	cnt, ok := numel(sh)
	if !ok || cnt > maxFold {
		return nil
	}
	out := newVal(sh, x.float, int(cnt))
	if cnt == 0 {
		return out
	}
	ic, ix, iy := bcastIndex(c.shape, sh), bcastIndex(x.shape, sh), bcastIndex(y.shape, sh)
	ci := c.ints()
	for k := range ic {
		src, at := y, iy[k]
		if ci[ic[k]] != 0 {
			src, at = x, ix[k]
		}
		if x.float {
			out.f = append(out.f, src.f[at])
		} else {
			out.i = append(out.i, src.i[at])
		}
	}
	return out
}

// strides of a row-major shape.
func strides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	s := int64(1)
	for a := len(shape) - 1; a >= 0; a-- {
		st[a] = s
		s *= shape[a]
	}
	return st
}

func foldGather(d, idx *cval, axis int64) *cval {
	ax := d.shape[axis]
	ii := idx.ints()
	for _, x := range ii {
		if x < -ax || x >= ax {
			return nil
		}
	}
	outer, _ := numel(d.shape[:axis])
	inner, _ := numel(d.shape[axis+1:])
	shape := append(append(slices.Clone(d.shape[:axis]), idx.shape...), d.shape[axis+1:]...)
	cnt, ok := numel(shape)
	if !ok || cnt > maxFold {
		return nil
	}
	out := newVal(shape, d.float, int(cnt))
	for o := range outer {
		for _, x := range ii {
			if x < 0 {
				x += ax
			}
			base := (o*ax + x) * inner
			for k := range inner {
				if d.float {
					out.f = append(out.f, d.f[base+k])
				} else {
					out.i = append(out.i, d.i[base+k])
				}
			}
		}
	}
	return out
}

func foldConcat(vals []*cval, axis int64) *cval {
	float := vals[0].float
	shape := slices.Clone(vals[0].shape)
	shape[axis] = 0
	for _, v := range vals {
		if v.float != float || len(v.shape) != len(shape) {
			return nil
		}
		shape[axis] += v.shape[axis]
	}
	cnt, ok := numel(shape)
	if !ok || cnt > maxFold {
		return nil
	}
	out := newVal(shape, float, int(cnt))
	outer, _ := numel(shape[:axis])
	for o := range outer {
		for _, v := range vals {
			inner, _ := numel(v.shape[axis:])
			lo, hi := o*inner, (o+1)*inner
			if float {
				out.f = append(out.f, v.f[lo:hi]...)
			} else {
				out.i = append(out.i, v.i[lo:hi]...)
			}
		}
	}
	return out
}

func foldSlice(v *cval, sl []span) *cval {
	shape := make([]int64, len(sl))
	for k, s := range sl {
		if s.n < 0 {
			return nil
		}
		shape[k] = s.n
	}
	cnt, ok := numel(shape)
	if !ok || cnt > maxFold {
		return nil
	}
	out := newVal(shape, v.float, int(cnt))
	st := strides(v.shape)
	for k := range cnt {
		rem, src := k, int64(0)
		for a := len(shape) - 1; a >= 0; a-- {
			c := rem % shape[a]
			rem /= shape[a]
			src += (sl[a].start + c*sl[a].step) * st[a]
		}
		if v.float {
			out.f = append(out.f, v.f[src])
		} else {
			out.i = append(out.i, v.i[src])
		}
	}
	return out
}

// foldReduce reduces a vector to one element (the product of a shape's
// dims, as tf2onnx computes sizes).
func foldReduce(op string, v *cval, shape []int64) *cval {
	out := newVal(shape, v.float, 1)
	if v.float {
		r := 0.0
		switch op {
		case "ReduceProd":
			r = 1
			for _, x := range v.f {
				r *= x
			}
		case "ReduceSum":
			for _, x := range v.f {
				r += x
			}
		default:
			return nil
		}
		out.f = append(out.f, r)
		return out
	}
	var r int64
	switch op {
	case "ReduceProd":
		r = 1
		for _, x := range v.i {
			r *= x
		}
	case "ReduceSum":
		for _, x := range v.i {
			r += x
		}
	case "ReduceMax", "ReduceMin":
		if len(v.i) == 0 {
			return nil
		}
		r = v.i[0]
		for _, x := range v.i {
			if op == "ReduceMax" {
				r = max(r, x)
			} else {
				r = min(r, x)
			}
		}
	default:
		return nil
	}
	out.i = append(out.i, r)
	return out
}

func foldTranspose(v *cval, attrPerm []int64) *cval {
	rank := len(v.shape)
	shape := make([]int64, rank)
	perm := make([]int64, rank) // the attribute's slice is not ours to change
	for k, p := range attrPerm {
		if p < 0 {
			p += int64(rank)
		}
		perm[k] = p
		shape[k] = v.shape[p]
	}
	cnt, _ := numel(shape)
	out := newVal(shape, v.float, int(cnt))
	st := strides(v.shape)
	for k := range cnt {
		rem, src := k, int64(0)
		for a := rank - 1; a >= 0; a-- {
			c := rem % shape[a]
			rem /= shape[a]
			src += c * st[perm[a]]
		}
		if v.float {
			out.f = append(out.f, v.f[src])
		} else {
			out.i = append(out.i, v.i[src])
		}
	}
	return out
}
