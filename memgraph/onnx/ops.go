package onnx

import (
	"fmt"
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
