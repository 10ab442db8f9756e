package onnx

// Shape inference and folding of the operators that move, cut and
// rebuild tensors: the ones shape subgraphs are made of.

import (
	"fmt"
	"math"
	"slices"
)

func inferGather(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	d, idx := in[0], arg(in, 1)
	if d == nil || idx == nil {
		return nil, fmt.Errorf("want data and indices")
	}
	o := &info{elem: d.elem}
	if d.shape == nil || idx.shape == nil {
		return one(o), nil
	}
	rank := int64(len(d.shape))
	axis, err := normAxis(n.attrInt("axis", 0), rank)
	if err != nil {
		return nil, err
	}
	o.shape = append(append(slices.Clone(d.shape[:axis]), idx.shape...), d.shape[axis+1:]...)
	if d.val != nil && idx.val != nil {
		o.val = foldGather(d.val, idx.val, axis)
	}
	return one(o), nil
}

func inferConcat(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	if len(in) == 0 || in[0] == nil {
		return nil, fmt.Errorf("no input")
	}
	o := &info{elem: in[0].elem}
	var rank int64 = -1
	for _, t := range in {
		if t != nil && t.shape != nil {
			rank = int64(len(t.shape))
		}
	}
	if rank < 0 {
		return one(o), nil
	}
	axis, err := normAxis(n.attrInt("axis", 0), rank)
	if err != nil {
		return nil, err
	}
	o.shape = make([]int64, rank)
	for k := range o.shape {
		o.shape[k] = -1
	}
	o.shape[axis] = 0
	allVal := true
	for _, t := range in {
		if t == nil || t.shape == nil || int64(len(t.shape)) != rank {
			o.shape[axis] = -1
			allVal = false
			continue
		}
		for k, d := range t.shape {
			if int64(k) == axis {
				if d < 0 || o.shape[axis] < 0 {
					o.shape[axis] = -1
				} else {
					o.shape[axis] += d
				}
			} else if d >= 0 {
				o.shape[k] = d
			}
		}
		allVal = allVal && t.val != nil
	}
	if allVal {
		vals := make([]*cval, len(in))
		for k, t := range in {
			vals[k] = t.val
		}
		o.val = foldConcat(vals, axis)
	}
	return one(o), nil
}

func inferUnsqueeze(r *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	t := in[0]
	axes, ok := intsArg(n, in, 1, "axes")
	if t == nil || t.shape == nil || !ok {
		return one(&info{elem: elemOf(t)}), nil
	}
	rank := int64(len(t.shape) + len(axes))
	ins := make([]bool, rank)
	for _, a := range axes {
		a, err := normAxis(a, rank)
		if err != nil {
			return nil, err
		}
		ins[a] = true
	}
	o := &info{elem: t.elem, shape: []int64{}}
	k := 0
	for _, one := range ins {
		if one {
			o.shape = append(o.shape, 1)
		} else {
			if k >= len(t.shape) {
				return nil, fmt.Errorf("repeated axes %v", axes)
			}
			o.shape = append(o.shape, t.shape[k])
			k++
		}
	}
	o.val = reshaped(t.val, o.shape)
	return one(o), nil
}

func inferSqueeze(r *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	t := in[0]
	if t == nil || t.shape == nil {
		return one(&info{elem: elemOf(t)}), nil
	}
	axes, ok := intsArg(n, in, 1, "axes")
	if arg(in, 1) != nil && !ok {
		return one(&info{elem: t.elem}), nil
	}
	drop := make([]bool, len(t.shape))
	if len(axes) == 0 {
		for k, d := range t.shape {
			if d < 0 {
				return one(&info{elem: t.elem}), nil
			}
			drop[k] = d == 1
		}
	}
	for _, a := range axes {
		a, err := normAxis(a, int64(len(t.shape)))
		if err != nil {
			return nil, err
		}
		drop[a] = true
	}
	o := &info{elem: t.elem, shape: []int64{}}
	for k, d := range t.shape {
		if !drop[k] {
			o.shape = append(o.shape, d)
		}
	}
	o.val = reshaped(t.val, o.shape)
	return one(o), nil
}

func inferReshape(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	t := in[0]
	if t == nil {
		return nil, fmt.Errorf("no input")
	}
	o := &info{elem: t.elem}
	target, ok := intsArg(n, in, 1, "shape")
	if !ok {
		if s := arg(in, 1); s != nil && len(s.shape) == 1 && s.shape[0] >= 0 {
			o.shape = slices.Repeat([]int64{-1}, int(s.shape[0]))
		}
		return one(o), nil
	}
	sh, err := reshapeDims(t.shape, target, n.attrInt("allowzero", 0) != 0)
	if err != nil {
		return nil, err
	}
	o.shape = sh
	o.val = reshaped(t.val, sh)
	return one(o), nil
}

// reshapeDims applies Reshape's rules (0 copies a dim unless allowzero,
// one -1 takes what is left).
func reshapeDims(in, target []int64, allowZero bool) ([]int64, error) {
	out := slices.Clone(target)
	infer := -1
	for k, d := range out {
		switch {
		case d == 0 && !allowZero:
			if in == nil || k >= len(in) {
				if in == nil {
					out[k] = -2 // unknown, fixed below
					continue
				}
				return nil, fmt.Errorf("reshape %v: dim %d copies a dim the input (rank %d) lacks", target, k, len(in))
			}
			out[k] = in[k]
		case d == -1:
			if infer >= 0 {
				return nil, fmt.Errorf("reshape %v: more than one -1", target)
			}
			infer = k
		case d < -1:
			return nil, fmt.Errorf("reshape %v: dim %d is %d", target, k, d)
		}
	}
	for k := range out {
		if out[k] == -2 {
			out[k] = -1
			if infer < 0 {
				infer = -2
			}
		}
	}
	if infer >= 0 {
		total, rest := mulDims(in), int64(1)
		for k, d := range out {
			if k == infer {
				continue
			}
			if d < 0 {
				rest = -1
				break
			}
			if d != 0 && rest > math.MaxInt64/d {
				return nil, fmt.Errorf("reshape %v: overflows", target)
			}
			rest *= d
		}
		switch {
		case total < 0 || rest < 0:
			out[infer] = -1
		case rest == 0 && total != 0:
			return nil, fmt.Errorf("reshape %v of %v: no size fits -1", target, in)
		case rest == 0:
			// numpy refuses it too: any size fits.
			return nil, fmt.Errorf("reshape %v of %v: -1 is undetermined, the other dims hold no elements", target, in)
		case total%rest != 0:
			return nil, fmt.Errorf("reshape %v of %v: %d elements do not divide by %d", target, in, total, rest)
		default:
			out[infer] = total / rest
		}
	}
	if a, b := mulDims(in), mulDims(out); a >= 0 && b >= 0 && a != b {
		return nil, fmt.Errorf("reshape %v of %v: %d elements, want %d", target, in, a, b)
	}
	return out, nil
}

func inferFlatten(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	t := in[0]
	if t == nil || t.shape == nil {
		return one(&info{elem: elemOf(t), shape: []int64{-1, -1}}), nil
	}
	rank := int64(len(t.shape))
	axis := n.attrInt("axis", 1)
	if axis < 0 {
		axis += rank
	}
	if axis < 0 || axis > rank {
		return nil, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	sh := []int64{mulDims(t.shape[:axis]), mulDims(t.shape[axis:])}
	return one(&info{elem: t.elem, shape: sh, val: reshaped(t.val, sh)}), nil
}

func inferSlice(r *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	t := in[0]
	if t == nil {
		return nil, fmt.Errorf("no input")
	}
	o := &info{elem: t.elem}
	if t.shape == nil {
		return one(o), nil
	}
	var starts, ends, axes, steps []int64
	var ok1, ok2 bool
	if r.opset < 10 {
		starts, ok1 = n.attrInts("starts")
		ends, ok2 = n.attrInts("ends")
		axes, _ = n.attrInts("axes")
	} else {
		starts, ok1 = intsArg(n, in, 1, "")
		ends, ok2 = intsArg(n, in, 2, "")
		if a := arg(in, 3); a != nil {
			if a.val == nil {
				ok1 = false
			} else {
				axes = a.val.ints()
			}
		}
		if a := arg(in, 4); a != nil {
			if a.val == nil {
				ok1 = false
			} else {
				steps = a.val.ints()
			}
		}
	}
	rank := int64(len(t.shape))
	if !ok1 || !ok2 {
		o.shape = slices.Repeat([]int64{-1}, int(rank))
		return one(o), nil
	}
	if len(starts) != len(ends) || (axes != nil && len(axes) != len(starts)) || (steps != nil && len(steps) != len(starts)) {
		return nil, fmt.Errorf("starts %v, ends %v, axes %v, steps %v: lengths differ", starts, ends, axes, steps)
	}
	sl, err := sliceSpec(t.shape, starts, ends, axes, steps)
	if err != nil {
		return nil, err
	}
	o.shape = make([]int64, rank)
	for k := range sl {
		o.shape[k] = sl[k].n
	}
	if t.val != nil {
		o.val = foldSlice(t.val, sl)
	}
	return one(o), nil
}

// span is one axis of a slice: n elements from start by step; n is -1
// when the axis's length is unknown.
type span struct{ start, step, n int64 }

func sliceSpec(shape, starts, ends, axes, steps []int64) ([]span, error) {
	rank := int64(len(shape))
	sl := make([]span, rank)
	for k, d := range shape {
		sl[k] = span{0, 1, d}
	}
	seen := make([]bool, rank)
	for i := range starts {
		a := int64(i)
		if axes != nil {
			a = axes[i]
		}
		a, err := normAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if seen[a] {
			return nil, fmt.Errorf("axis %d sliced twice", a)
		}
		seen[a] = true
		step := int64(1)
		if steps != nil {
			step = steps[i]
		}
		if step == 0 {
			return nil, fmt.Errorf("step 0 on axis %d", a)
		}
		d := shape[a]
		if d < 0 {
			sl[a] = span{0, step, -1}
			continue
		}
		s, e := starts[i], ends[i]
		clamp := func(x, lo, hi int64) int64 {
			if x < 0 {
				x += d
				if x < -d { // overflow guard for MinInt64 + d
					x = lo
				}
			}
			return min(max(x, lo), hi)
		}
		var cnt int64
		if step > 0 {
			s, e = clamp(s, 0, d), clamp(e, 0, d)
			if e > s {
				cnt = (e-s-1)/step + 1
			}
		} else {
			step = max(step, -math.MaxInt64) // so that -step does not overflow
			s, e = clamp(s, -1, d-1), clamp(e, -1, d-1)
			if s > e {
				cnt = (s-e-1)/(-step) + 1
			}
		}
		sl[a] = span{s, step, cnt}
	}
	return sl, nil
}

func inferSplit(r *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	t := in[0]
	outs := make([]*info, len(n.outputs))
	for k := range outs {
		outs[k] = &info{elem: elemOf(t)}
	}
	if t == nil || t.shape == nil || len(outs) == 0 {
		return outs, nil
	}
	rank := int64(len(t.shape))
	axis, err := normAxis(n.attrInt("axis", 0), rank)
	if err != nil {
		return nil, err
	}
	parts, ok := intsArg(n, in, 1, "split")
	if arg(in, 1) != nil && !ok {
		return outs, nil
	}
	d := t.shape[axis]
	if len(parts) == 0 {
		if d < 0 {
			for _, o := range outs {
				o.shape = slices.Clone(t.shape)
			}
			return outs, nil
		}
		k := int64(len(outs))
		chunk := (d + k - 1) / k // opset 18's num_outputs rule; even splits are the same
		for i := range k {
			parts = append(parts, max(0, min(chunk, d-i*chunk)))
		}
	}
	if len(parts) != len(outs) {
		return nil, fmt.Errorf("split %v into %d outputs", parts, len(outs))
	}
	var sum, at int64
	for _, p := range parts {
		if p < 0 {
			return nil, fmt.Errorf("split %v: negative part", parts)
		}
		sum += p
	}
	if d >= 0 && sum != d {
		return nil, fmt.Errorf("split %v of axis %d (%d long)", parts, axis, d)
	}
	for k, p := range parts {
		outs[k].shape = slices.Clone(t.shape)
		outs[k].shape[axis] = p
		if t.val != nil {
			sl, _ := sliceSpec(t.shape, []int64{at}, []int64{at + p}, []int64{axis}, nil)
			outs[k].val = foldSlice(t.val, sl)
		}
		at += p
	}
	return outs, nil
}

func inferPad(r *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	t := in[0]
	if t == nil {
		return nil, fmt.Errorf("no input")
	}
	o := &info{elem: t.elem}
	if t.shape == nil {
		return one(o), nil
	}
	rank := int64(len(t.shape))
	pads, ok := intsArg(n, in, 1, "pads")
	if r.opset < 11 {
		pads, ok = n.attrInts("pads")
		if !ok {
			pads, ok = n.attrInts("paddings") // opset 1
		}
	}
	if !ok {
		o.shape = slices.Repeat([]int64{-1}, int(rank))
		return one(o), nil
	}
	axes := make([]int64, rank)
	for k := range axes {
		axes[k] = int64(k)
	}
	if a := arg(in, 3); a != nil {
		if a.val == nil {
			o.shape = slices.Repeat([]int64{-1}, int(rank))
			return one(o), nil
		}
		axes = a.val.ints()
	}
	if len(pads) != 2*len(axes) {
		return nil, fmt.Errorf("pads %v for %d axes", pads, len(axes))
	}
	o.shape = slices.Clone(t.shape)
	for i, a := range axes {
		a, err := normAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if o.shape[a] >= 0 {
			o.shape[a] += pads[i] + pads[i+len(axes)]
			if o.shape[a] < 0 {
				return nil, fmt.Errorf("pads %v leave axis %d negative", pads, a)
			}
		}
	}
	return one(o), nil
}

func inferTranspose(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	t := in[0]
	if t == nil || t.shape == nil {
		return one(&info{elem: elemOf(t)}), nil
	}
	rank := len(t.shape)
	perm, ok := n.attrInts("perm")
	if !ok {
		for k := rank - 1; k >= 0; k-- {
			perm = append(perm, int64(k))
		}
	}
	if len(perm) != rank {
		return nil, fmt.Errorf("perm %v for rank %d", perm, rank)
	}
	seen := make([]bool, rank)
	o := &info{elem: t.elem, shape: make([]int64, rank)}
	for k, p := range perm {
		p, err := normAxis(p, int64(rank))
		if err != nil || seen[p] {
			return nil, fmt.Errorf("perm %v is not a permutation", perm)
		}
		seen[p] = true
		o.shape[k] = t.shape[p]
	}
	if t.val != nil {
		o.val = foldTranspose(t.val, perm)
	}
	return one(o), nil
}

func inferResize(r *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	t := in[0]
	if t == nil {
		return nil, fmt.Errorf("no input")
	}
	o := &info{elem: t.elem}
	if t.shape == nil {
		return one(o), nil
	}
	rank := len(t.shape)
	var scales *cval
	var sizes []int64
	switch {
	case n.opType == "Upsample" && arg(in, 1) == nil:
		if f, ok := n.attrFloats("scales"); ok {
			scales = &cval{float: true}
			for _, x := range f {
				scales.f = append(scales.f, float64(x))
			}
		}
	case n.opType == "Upsample" || r.opset < 11:
		if s := arg(in, 1); s != nil {
			scales = s.val
		}
	default:
		if s := arg(in, 3); s != nil && (s.val == nil || s.val.len() > 0) {
			if s.val == nil {
				o.shape = slices.Repeat([]int64{-1}, rank)
				return one(o), nil
			}
			sizes = s.val.ints()
		} else if s := arg(in, 2); s != nil {
			scales = s.val
		}
	}
	axes, hasAxes := n.attrInts("axes")
	if !hasAxes {
		for k := range rank {
			axes = append(axes, int64(k))
		}
	}
	o.shape = slices.Clone(t.shape)
	switch {
	case sizes != nil:
		if len(sizes) != len(axes) {
			return nil, fmt.Errorf("sizes %v for %d axes", sizes, len(axes))
		}
		for i, a := range axes {
			a, err := normAxis(a, int64(rank))
			if err != nil {
				return nil, err
			}
			o.shape[a] = sizes[i]
		}
		if mode := string(n.attrs["keep_aspect_ratio_policy"].sOr("stretch")); mode != "stretch" {
			return nil, fmt.Errorf("keep_aspect_ratio_policy %q is not supported", mode)
		}
	case scales != nil:
		if scales.len() != len(axes) {
			return nil, fmt.Errorf("%d scales for %d axes", scales.len(), len(axes))
		}
		for i, a := range axes {
			a, err := normAxis(a, int64(rank))
			if err != nil {
				return nil, err
			}
			if d := t.shape[a]; d >= 0 {
				f := math.Floor(float64(d) * scales.at(i))
				if !(f >= 0 && f < 1<<40) {
					return nil, fmt.Errorf("scale %v of axis %d gives %v", scales.at(i), a, f)
				}
				o.shape[a] = int64(f)
			}
		}
	default:
		o.shape = slices.Repeat([]int64{-1}, rank)
	}
	return one(o), nil
}

func (a *attr) sOr(def string) []byte {
	if a == nil {
		return []byte(def)
	}
	return a.s
}

func inferExpand(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	t := in[0]
	if t == nil || arg(in, 1) == nil {
		return nil, fmt.Errorf("want input and shape")
	}
	o := &info{elem: t.elem}
	s := in[1]
	if s.val == nil {
		return one(o), nil
	}
	sh, err := broadcast(t.shape, s.val.ints())
	if err != nil {
		return nil, err
	}
	o.shape = sh
	if t.val != nil && sh != nil {
		if k, ok := numel(sh); ok && k <= maxFold {
			o.val = foldBinary(&node{opType: "Expand"}, t.val, &cval{shape: sh, i: make([]int64, k)})
		}
	}
	return one(o), nil
}

func inferTile(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	t := in[0]
	o := &info{elem: elemOf(t)}
	rep, ok := intsArg(n, in, 1, "")
	if t == nil || t.shape == nil || !ok {
		return one(o), nil
	}
	if len(rep) != len(t.shape) {
		return nil, fmt.Errorf("repeats %v for rank %d", rep, len(t.shape))
	}
	o.shape = make([]int64, len(rep))
	for k, d := range t.shape {
		o.shape[k] = -1
		if d >= 0 && rep[k] >= 0 {
			o.shape[k] = d * rep[k]
		}
	}
	return one(o), nil
}

func inferRange(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	if len(in) < 3 || in[0] == nil || in[1] == nil || in[2] == nil {
		return nil, fmt.Errorf("want start, limit and delta")
	}
	o := &info{elem: in[0].elem, shape: []int64{-1}}
	if in[0].val == nil || in[1].val == nil || in[2].val == nil ||
		in[0].val.len() != 1 || in[1].val.len() != 1 || in[2].val.len() != 1 {
		return one(o), nil
	}
	st, lim, d := in[0].val.at(0), in[1].val.at(0), in[2].val.at(0)
	if d == 0 {
		return nil, fmt.Errorf("delta 0")
	}
	cnt := math.Max(math.Ceil((lim-st)/d), 0)
	if !(cnt < 1<<40) {
		return nil, fmt.Errorf("range of %v elements", cnt)
	}
	o.shape[0] = int64(cnt)
	if cnt <= maxFold {
		v := &cval{shape: []int64{int64(cnt)}, float: in[0].val.float}
		for k := range int64(cnt) {
			if v.float {
				v.f = append(v.f, st+float64(k)*d)
			} else {
				v.i = append(v.i, in[0].val.ints()[0]+k*in[2].val.ints()[0])
			}
		}
		if v.float && v.f == nil {
			v.f = []float64{}
		}
		if !v.float && v.i == nil {
			v.i = []int64{}
		}
		o.val = v
	}
	return one(o), nil
}

func inferWhere(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	if len(in) != 3 || in[0] == nil || in[1] == nil || in[2] == nil {
		return nil, fmt.Errorf("want condition, x and y")
	}
	sh, err := broadcast(in[0].shape, in[1].shape, in[2].shape)
	if err != nil {
		return nil, err
	}
	o := &info{elem: in[1].elem, shape: sh}
	if in[0].val != nil && in[1].val != nil && in[2].val != nil {
		o.val = foldWhere(in[0].val, in[1].val, in[2].val)
	}
	return one(o), nil
}
