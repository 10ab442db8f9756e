package onnx

import (
	"fmt"
	"math"
	"slices"
)

type inferFunc func(r *inferer, n *node, in []*info, s *scope) ([]*info, error)

// opInfer is the shape inference of the default domain's operators that
// PyTorch's exporter, tf2onnx and Barracuda's converter emit. An op not
// listed leaves its outputs unknown (then value_info must size them).
var opInfer map[string]inferFunc

func init() {
	opInfer = map[string]inferFunc{
		"Cast": inferCast,
		"CastLike": func(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
			return castTo(in[0], elemOf(arg(in, 1)))
		},
		"Shape":             inferShape,
		"Size":              inferSize,
		"ConstantOfShape":   inferConstantOfShape,
		"Constant":          inferConstant,
		"Gather":            inferGather,
		"Concat":            inferConcat,
		"Unsqueeze":         inferUnsqueeze,
		"Squeeze":           inferSqueeze,
		"Reshape":           inferReshape,
		"Flatten":           inferFlatten,
		"Slice":             inferSlice,
		"Split":             inferSplit,
		"Pad":               inferPad,
		"Transpose":         inferTranspose,
		"Resize":            inferResize,
		"Upsample":          inferResize,
		"Expand":            inferExpand,
		"Tile":              inferTile,
		"Range":             inferRange,
		"Where":             inferWhere,
		"MatMul":            inferMatMul,
		"Gemm":              inferGemm,
		"Conv":              inferConv,
		"ConvTranspose":     inferConvTranspose,
		"MaxPool":           inferPool,
		"AveragePool":       inferPool,
		"LpPool":            inferPool,
		"GlobalAveragePool": inferGlobalPool,
		"GlobalMaxPool":     inferGlobalPool,
		"GlobalLpPool":      inferGlobalPool,
		"ArgMax":            inferArgReduce,
		"ArgMin":            inferArgReduce,
		"TopK":              inferTopK,
		"DepthToSpace":      inferDepthToSpace,
		"SpaceToDepth":      inferDepthToSpace,
		"LSTM":              inferRNN,
		"GRU":               inferRNN,
		"RNN":               inferRNN,
		"If":                inferIf,
		"Loop":              inferLoop,
		"NonZero":           inferDataDep,
		"NonMaxSuppression": inferDataDep,
		"Compress":          inferDataDep,
		"Unique":            inferDataDep,
	}
	for _, op := range []string{"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Abs", "Clip",
		"LeakyRelu", "Elu", "Selu", "Celu", "Erf", "Softplus", "Softsign", "HardSigmoid", "HardSwish",
		"Identity", "Sign", "Floor", "Ceil", "Round", "Reciprocal", "Softmax", "LogSoftmax", "Hardmax",
		"InstanceNormalization", "LRN", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh",
		"Mish", "Gelu", "ThresholdedRelu", "Shrink", "CumSum", "Not", "Trilu", "ReverseSequence",
		"MeanVarianceNormalization", "LpNormalization", "BitwiseNot"} {
		opInfer[op] = inferUnary
	}
	for _, op := range []string{"BatchNormalization", "LayerNormalization", "Dropout", "GroupNormalization"} {
		opInfer[op] = inferFirstSame
	}
	for _, op := range []string{"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Mod",
		"PRelu", "BitShift", "And", "Or", "Xor", "Equal", "Less", "Greater", "LessOrEqual",
		"GreaterOrEqual", "BitwiseAnd", "BitwiseOr", "BitwiseXor"} {
		opInfer[op] = inferBinary
	}
	for _, op := range []string{"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
		"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"} {
		opInfer[op] = inferReduce
	}
	for _, op := range []string{"IsNaN", "IsInf"} {
		opInfer[op] = func(_ *inferer, _ *node, in []*info, _ *scope) ([]*info, error) {
			return one(withElem(in[0], tBool)), nil
		}
	}
	opInfer["QuantizeLinear"] = func(_ *inferer, _ *node, in []*info, _ *scope) ([]*info, error) {
		e := int64(tUint8)
		if z := arg(in, 2); z != nil && z.elem != 0 {
			e = z.elem
		}
		return one(withElem(in[0], e)), nil
	}
	opInfer["DequantizeLinear"] = func(_ *inferer, _ *node, in []*info, _ *scope) ([]*info, error) {
		return one(withElem(in[0], elemOf(arg(in, 1)))), nil
	}
}

func elemOf(t *info) int64 {
	if t == nil {
		return 0
	}
	return t.elem
}

func inferUnary(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	if len(in) == 0 || in[0] == nil {
		return nil, fmt.Errorf("no input")
	}
	o := same(in[0])
	o.val = foldUnary(n, in[0].val)
	return one(o), nil
}

// inferFirstSame: every output has the first input's type and shape
// (BatchNormalization's running stats are rare at inference; Dropout's
// mask is boolean).
func inferFirstSame(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	if len(in) == 0 || in[0] == nil {
		return nil, fmt.Errorf("no input")
	}
	outs := []*info{same(in[0])}
	if n.opType == "Dropout" && len(n.outputs) > 1 {
		outs = append(outs, withElem(in[0], tBool))
		outs[0].val = in[0].val
	}
	return outs, nil
}

func inferBinary(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	var shapes [][]int64
	for _, t := range in {
		if t == nil {
			return nil, fmt.Errorf("absent input")
		}
		shapes = append(shapes, t.shape)
	}
	if len(in) == 0 {
		return nil, fmt.Errorf("no input")
	}
	sh, err := broadcast(shapes...)
	if err != nil {
		return nil, err
	}
	o := &info{elem: in[0].elem, shape: sh}
	switch n.opType {
	case "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor":
		o.elem = tBool
	}
	if len(in) == 2 && in[0].val != nil && in[1].val != nil {
		o.val = foldBinary(n, in[0].val, in[1].val)
	}
	return one(o), nil
}

func inferCast(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	return castTo(in[0], n.attrInt("to", 0))
}

func castTo(t *info, to int64) ([]*info, error) {
	if t == nil {
		return nil, fmt.Errorf("no input")
	}
	o := withElem(t, to)
	if t.val != nil {
		v := *t.val
		switch {
		case isFloat(to) && !v.float:
			v.f = make([]float64, len(v.i))
			for k, x := range v.i {
				v.f[k] = float64(x)
			}
			v.float, v.i = true, nil
		case !isFloat(to) && v.float:
			v.i, v.float, v.f = v.ints(), false, nil
			if to == tBool {
				for k, x := range v.i {
					if x != 0 {
						v.i[k] = 1
					}
				}
			}
		}
		o.val = &v
	}
	return one(o), nil
}

func inferShape(r *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	t := in[0]
	if t == nil || t.shape == nil {
		return one(&info{elem: tInt64}), nil
	}
	rank := int64(len(t.shape))
	start, end := n.attrInt("start", 0), n.attrInt("end", rank)
	clampAxis := func(a int64) int64 {
		if a < 0 {
			a += rank
		}
		return min(max(a, 0), rank)
	}
	start, end = clampAxis(start), clampAxis(end)
	dims := []int64{}
	if start < end {
		dims = slices.Clone(t.shape[start:end])
	}
	o := &info{elem: tInt64, shape: []int64{int64(len(dims))}}
	if !slices.Contains(dims, -1) {
		o.val = &cval{shape: []int64{int64(len(dims))}, i: dims}
	}
	return one(o), nil
}

func inferSize(_ *inferer, _ *node, in []*info, _ *scope) ([]*info, error) {
	o := &info{elem: tInt64, shape: []int64{}}
	if t := in[0]; t != nil && t.shape != nil {
		if p := mulDims(t.shape); p >= 0 {
			o.val = &cval{shape: []int64{}, i: []int64{p}}
		}
	}
	return one(o), nil
}

func inferConstantOfShape(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	o := &info{elem: tFloat}
	fill := &cval{float: true, f: []float64{0}}
	if a, ok := n.attrs["value"]; ok && a.t != nil {
		o.elem = a.t.dtype
		c, err := constFromTensor(a.t)
		if err != nil {
			return nil, err
		}
		if c == nil || c.len() != 1 {
			return nil, fmt.Errorf("attribute value: want a one-element tensor")
		}
		fill = c
	}
	t := in[0]
	if t == nil || t.val == nil {
		if t != nil && len(t.shape) == 1 && t.shape[0] >= 0 {
			o.shape = make([]int64, t.shape[0])
			for k := range o.shape {
				o.shape[k] = -1
			}
		}
		return one(o), nil
	}
	o.shape = slices.Clone(t.val.ints())
	for _, d := range o.shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dim in shape %v", o.shape)
		}
	}
	if k, ok := numel(o.shape); ok && k <= maxFold {
		v := &cval{shape: slices.Clone(o.shape), float: fill.float}
		for range k {
			if fill.float {
				v.f = append(v.f, fill.f[0])
			} else {
				v.i = append(v.i, fill.i[0])
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

func inferConstant(_ *inferer, n *node, _ []*info, _ *scope) ([]*info, error) {
	if a, ok := n.attrs["value"]; ok && a.t != nil {
		c, err := constFromTensor(a.t)
		if err != nil {
			return nil, err
		}
		return one(&info{elem: a.t.dtype, shape: append([]int64{}, a.t.dims...), val: c}), nil
	}
	if a, ok := n.attrs["value_int"]; ok {
		return one(&info{elem: tInt64, shape: []int64{}, val: &cval{shape: []int64{}, i: []int64{a.i}}}), nil
	}
	if a, ok := n.attrs["value_ints"]; ok {
		l := int64(len(a.ints))
		return one(&info{elem: tInt64, shape: []int64{l}, val: &cval{shape: []int64{l}, i: slices.Clone(a.ints)}}), nil
	}
	if a, ok := n.attrs["value_float"]; ok {
		return one(&info{elem: tFloat, shape: []int64{}, val: &cval{shape: []int64{}, float: true, f: []float64{float64(a.f)}}}), nil
	}
	if a, ok := n.attrs["value_floats"]; ok {
		l := int64(len(a.floats))
		v := &cval{shape: []int64{l}, float: true, f: []float64{}}
		for _, x := range a.floats {
			v.f = append(v.f, float64(x))
		}
		return one(&info{elem: tFloat, shape: []int64{l}, val: v}), nil
	}
	return one(&info{unsupported: "Constant without a value tensor"}), nil
}

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
		case rest == 0:
			if total != 0 {
				return nil, fmt.Errorf("reshape %v of %v: no size fits -1", target, in)
			}
			out[infer] = 0
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
				cnt = (e - s + step - 1) / step
			}
		} else {
			s, e = clamp(s, -1, d-1), clamp(e, -1, d-1)
			if s > e {
				cnt = (s - e + (-step) - 1) / (-step)
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
				v.i = append(v.i, in[0].val.i[0]+k*in[2].val.i[0])
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

func inferMatMul(_ *inferer, _ *node, in []*info, _ *scope) ([]*info, error) {
	a, b := in[0], arg(in, 1)
	if a == nil || b == nil {
		return nil, fmt.Errorf("want two inputs")
	}
	o := &info{elem: a.elem}
	if a.shape == nil || b.shape == nil || len(a.shape) == 0 || len(b.shape) == 0 {
		return one(o), nil
	}
	as, bs := slices.Clone(a.shape), slices.Clone(b.shape)
	if len(as) == 1 {
		as = []int64{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int64{bs[0], 1}
	}
	ka, kb := as[len(as)-1], bs[len(bs)-2]
	if ka >= 0 && kb >= 0 && ka != kb {
		return nil, fmt.Errorf("matmul of %v and %v", a.shape, b.shape)
	}
	batch, err := broadcast(as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		return nil, err
	}
	o.shape = batch
	if len(a.shape) > 1 {
		o.shape = append(o.shape, as[len(as)-2])
	}
	if len(b.shape) > 1 {
		o.shape = append(o.shape, bs[len(bs)-1])
	}
	return one(o), nil
}

func inferGemm(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	a, b := in[0], arg(in, 1)
	if a == nil || b == nil {
		return nil, fmt.Errorf("want A and B")
	}
	o := &info{elem: a.elem}
	if len(a.shape) != 2 || len(b.shape) != 2 {
		return one(o), nil
	}
	m, nn := a.shape[0], b.shape[1]
	if n.attrInt("transA", 0) != 0 {
		m = a.shape[1]
	}
	if n.attrInt("transB", 0) != 0 {
		nn = b.shape[0]
	}
	o.shape = []int64{m, nn}
	return one(o), nil
}

// convOut is one spatial output dim of a convolution or pooling window.
func convOut(in, k, s, d, pb, pe int64, autoPad string, ceil bool) int64 {
	if in < 0 || k < 0 {
		return -1
	}
	switch autoPad {
	case "SAME_UPPER", "SAME_LOWER":
		return (in + s - 1) / s
	case "VALID":
		pb, pe = 0, 0
	}
	num := in + pb + pe - d*(k-1) - 1
	if num < 0 {
		return 0
	}
	if ceil {
		out := (num+s-1)/s + 1
		if (out-1)*s >= in+pb { // the last window must start inside the input or its begin padding
			out--
		}
		return out
	}
	return num/s + 1
}

// window reads kernel_shape, strides, dilations and pads for nsp spatial
// dims.
func window(n *node, nsp int, kernel []int64) (strides, dil, pads []int64, autoPad string, err error) {
	get := func(name string, def int64, l int) ([]int64, error) {
		v, ok := n.attrInts(name)
		if !ok {
			return slices.Repeat([]int64{def}, l), nil
		}
		if len(v) != l {
			return nil, fmt.Errorf("%s %v: want %d values", name, v, l)
		}
		for _, x := range v {
			if x < 0 || (name != "pads" && x == 0) {
				return nil, fmt.Errorf("%s %v: want positive values", name, v)
			}
		}
		return v, nil
	}
	if strides, err = get("strides", 1, nsp); err != nil {
		return
	}
	if dil, err = get("dilations", 1, nsp); err != nil {
		return
	}
	if pads, err = get("pads", 0, 2*nsp); err != nil {
		return
	}
	autoPad = string(n.attrs["auto_pad"].sOr("NOTSET"))
	if len(kernel) != nsp {
		err = fmt.Errorf("kernel_shape %v for %d spatial dims", kernel, nsp)
	}
	return
}

func inferConv(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	x, w := in[0], arg(in, 1)
	if x == nil || w == nil {
		return nil, fmt.Errorf("want X and W")
	}
	o := &info{elem: x.elem}
	if len(x.shape) < 3 || w.shape == nil {
		return one(o), nil
	}
	nsp := len(x.shape) - 2
	kernel, ok := n.attrInts("kernel_shape")
	if !ok && len(w.shape) == nsp+2 {
		kernel = w.shape[2:]
	}
	strides, dil, pads, ap, err := window(n, nsp, kernel)
	if err != nil {
		return nil, err
	}
	o.shape = []int64{x.shape[0], w.shape[0]}
	for k := range nsp {
		o.shape = append(o.shape, convOut(x.shape[2+k], kernel[k], strides[k], dil[k], pads[k], pads[k+nsp], ap, false))
	}
	return one(o), nil
}

func inferConvTranspose(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	x, w := in[0], arg(in, 1)
	if x == nil || w == nil {
		return nil, fmt.Errorf("want X and W")
	}
	o := &info{elem: x.elem}
	if len(x.shape) < 3 || len(w.shape) < 3 {
		return one(o), nil
	}
	nsp := len(x.shape) - 2
	kernel, ok := n.attrInts("kernel_shape")
	if !ok {
		kernel = w.shape[2:]
	}
	strides, dil, pads, ap, err := window(n, nsp, kernel)
	if err != nil {
		return nil, err
	}
	groups := n.attrInt("group", 1)
	o.shape = []int64{x.shape[0], -1}
	if w.shape[1] >= 0 {
		o.shape[1] = w.shape[1] * groups
	}
	outPad, _ := n.attrInts("output_padding")
	outShape, hasOut := n.attrInts("output_shape")
	for k := range nsp {
		d := x.shape[2+k]
		switch {
		case hasOut && len(outShape) == nsp:
			o.shape = append(o.shape, outShape[k])
		case d < 0 || kernel[k] < 0:
			o.shape = append(o.shape, -1)
		case ap == "SAME_UPPER" || ap == "SAME_LOWER":
			o.shape = append(o.shape, d*strides[k])
		default:
			op := int64(0)
			if k < len(outPad) {
				op = outPad[k]
			}
			pb, pe := pads[k], pads[k+nsp]
			if ap == "VALID" {
				pb, pe = 0, 0
			}
			o.shape = append(o.shape, strides[k]*(d-1)+op+(kernel[k]-1)*dil[k]+1-pb-pe)
		}
	}
	return one(o), nil
}

func inferPool(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	x := in[0]
	if x == nil {
		return nil, fmt.Errorf("no input")
	}
	o := &info{elem: x.elem}
	outs := []*info{o}
	if len(n.outputs) > 1 {
		outs = append(outs, &info{elem: tInt64})
	}
	if len(x.shape) < 3 {
		return outs, nil
	}
	nsp := len(x.shape) - 2
	kernel, _ := n.attrInts("kernel_shape")
	strides, dil, pads, ap, err := window(n, nsp, kernel)
	if err != nil {
		return nil, err
	}
	ceil := n.attrInt("ceil_mode", 0) != 0
	o.shape = []int64{x.shape[0], x.shape[1]}
	for k := range nsp {
		o.shape = append(o.shape, convOut(x.shape[2+k], kernel[k], strides[k], dil[k], pads[k], pads[k+nsp], ap, ceil))
	}
	if len(outs) > 1 {
		outs[1].shape = slices.Clone(o.shape)
	}
	return outs, nil
}

func inferGlobalPool(_ *inferer, _ *node, in []*info, _ *scope) ([]*info, error) {
	x := in[0]
	o := &info{elem: elemOf(x)}
	if x != nil && len(x.shape) >= 2 {
		o.shape = append([]int64{x.shape[0], x.shape[1]}, slices.Repeat([]int64{1}, len(x.shape)-2)...)
	}
	return one(o), nil
}

func inferReduce(r *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	x := in[0]
	if x == nil {
		return nil, fmt.Errorf("no input")
	}
	o := &info{elem: x.elem}
	if x.shape == nil {
		return one(o), nil
	}
	axes, ok := intsArg(n, in, 1, "axes")
	if arg(in, 1) != nil && !ok {
		return one(o), nil
	}
	keep := n.attrInt("keepdims", 1) != 0
	rank := int64(len(x.shape))
	red := make([]bool, rank)
	if len(axes) == 0 {
		if n.attrInt("noop_with_empty_axes", 0) != 0 {
			o.shape = slices.Clone(x.shape)
			o.val = x.val
			return one(o), nil
		}
		for k := range red {
			red[k] = true
		}
	}
	for _, a := range axes {
		a, err := normAxis(a, rank)
		if err != nil {
			return nil, err
		}
		red[a] = true
	}
	o.shape = []int64{}
	for k, d := range x.shape {
		switch {
		case !red[k]:
			o.shape = append(o.shape, d)
		case keep:
			o.shape = append(o.shape, 1)
		}
	}
	if x.val != nil && len(x.shape) == 1 && red[0] {
		o.val = foldReduce(n.opType, x.val, o.shape)
	}
	return one(o), nil
}

func inferArgReduce(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	x := in[0]
	o := &info{elem: tInt64}
	if x == nil || x.shape == nil {
		return one(o), nil
	}
	axis, err := normAxis(n.attrInt("axis", 0), int64(len(x.shape)))
	if err != nil {
		return nil, err
	}
	o.shape = slices.Clone(x.shape)
	if n.attrInt("keepdims", 1) != 0 {
		o.shape[axis] = 1
	} else {
		o.shape = slices.Delete(o.shape, int(axis), int(axis)+1)
	}
	return one(o), nil
}

func inferTopK(r *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	x := in[0]
	vals, idx := &info{elem: elemOf(x)}, &info{elem: tInt64}
	if x == nil || x.shape == nil {
		return []*info{vals, idx}, nil
	}
	axis, err := normAxis(n.attrInt("axis", -1), int64(len(x.shape)))
	if err != nil {
		return nil, err
	}
	k := int64(-1)
	if r.opset < 10 {
		k = n.attrInt("k", -1)
	} else if kk, ok := intsArg(n, in, 1, ""); ok && len(kk) == 1 {
		k = kk[0]
	}
	vals.shape = slices.Clone(x.shape)
	vals.shape[axis] = k
	idx.shape = slices.Clone(vals.shape)
	return []*info{vals, idx}, nil
}

func inferDepthToSpace(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	x := in[0]
	o := &info{elem: elemOf(x)}
	b := n.attrInt("blocksize", 0)
	if x == nil || len(x.shape) != 4 || b <= 0 {
		return one(o), nil
	}
	s := x.shape
	if n.opType == "DepthToSpace" {
		o.shape = []int64{s[0], div(s[1], b*b), mul(s[2], b), mul(s[3], b)}
	} else {
		o.shape = []int64{s[0], mul(s[1], b*b), div(s[2], b), div(s[3], b)}
	}
	return one(o), nil
}

func mul(a, b int64) int64 {
	if a < 0 {
		return -1
	}
	return a * b
}

func div(a, b int64) int64 {
	if a < 0 {
		return -1
	}
	return a / b
}

func inferRNN(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	x := in[0]
	if x == nil {
		return nil, fmt.Errorf("no input")
	}
	e := x.elem
	h := n.attrInt("hidden_size", -1)
	dirs := int64(1)
	if string(n.attrs["direction"].sOr("forward")) == "bidirectional" {
		dirs = 2
	}
	seq, batch := int64(-1), int64(-1)
	if len(x.shape) == 3 {
		seq, batch = x.shape[0], x.shape[1]
		if n.attrInt("layout", 0) != 0 {
			seq, batch = batch, seq
		}
	}
	y := &info{elem: e, shape: []int64{seq, dirs, batch, h}}
	yh := &info{elem: e, shape: []int64{dirs, batch, h}}
	if n.attrInt("layout", 0) != 0 {
		y.shape = []int64{batch, seq, dirs, h}
		yh.shape = []int64{batch, dirs, h}
	}
	yc := &info{elem: e, shape: slices.Clone(yh.shape)}
	return []*info{y, yh, yc}, nil
}

// inferDataDep: outputs whose size depends on the data; Options.Unknown
// may stand in for the unknown dims.
func inferDataDep(_ *inferer, n *node, in []*info, _ *scope) ([]*info, error) {
	outs := make([]*info, len(n.outputs))
	for k := range outs {
		outs[k] = &info{dataDep: true}
	}
	x := arg(in, 0)
	switch n.opType {
	case "NonZero":
		outs[0].elem = tInt64
		if x != nil && x.shape != nil {
			outs[0].shape = []int64{int64(len(x.shape)), -1}
		}
	case "NonMaxSuppression":
		outs[0].elem, outs[0].shape = tInt64, []int64{-1, 3}
	case "Compress", "Unique":
		outs[0].elem = elemOf(x)
		for _, o := range outs[1:] {
			o.elem = tInt64
		}
	}
	return outs, nil
}
