package onnx

// Shape inference of the compute operators: convolutions, pooling,
// matrix products, reductions, RNNs, and the outputs whose size depends
// on the data.

import (
	"fmt"
	"slices"
)

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
	if x == nil || len(x.shape) != 4 || b <= 0 || b > 1<<20 {
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
