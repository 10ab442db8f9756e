package onnx

import (
	"fmt"
	"slices"
)

// Shape inference through If and Loop: each subgraph is inferred in its
// own scope, chained to the node's, so outer-scope names resolve.

func inferIf(r *inferer, n *node, in []*info, s *scope) ([]*info, error) {
	th, el := n.attrs["then_branch"], n.attrs["else_branch"]
	if th == nil || th.g == nil || el == nil || el.g == nil {
		return nil, fmt.Errorf("want then_branch and else_branch graphs")
	}
	var outs [2][]*info
	for b, g := range []*graph{th.g, el.g} {
		sc := newScope(s)
		if len(g.inputs) > 0 {
			return nil, fmt.Errorf("%s: a branch takes no inputs, has %d", g.where, len(g.inputs))
		}
		if err := r.graph(g, sc); err != nil {
			return nil, err
		}
		if len(g.outputs) != len(n.outputs) {
			return nil, fmt.Errorf("%s: %d outputs, the node has %d", g.where, len(g.outputs), len(n.outputs))
		}
		for _, name := range g.outputs {
			t := sc.lookup(name)
			if t == nil {
				return nil, fmt.Errorf("%s: output %q: not computed in the branch", g.where, name)
			}
			outs[b] = append(outs[b], t)
		}
	}
	if c := in[0]; c != nil && c.val != nil && c.val.len() == 1 {
		b := 1
		if c.val.at(0) != 0 {
			b = 0
		}
		res := make([]*info, len(outs[b]))
		for k, t := range outs[b] {
			res[k] = &info{elem: t.elem, shape: slices.Clone(t.shape), val: t.val, dataDep: t.dataDep}
		}
		return res, nil
	}
	res := make([]*info, len(n.outputs))
	for k := range res {
		a, b := outs[0][k], outs[1][k]
		o := &info{elem: a.elem, dataDep: a.dataDep || b.dataDep}
		if o.elem == 0 {
			o.elem = b.elem
		}
		switch {
		case a.shape == nil || b.shape == nil:
		case len(a.shape) != len(b.shape):
			o.maxBytes = max(bytesOf(a), bytesOf(b))
		default:
			o.shape = slices.Clone(a.shape)
			for i, d := range b.shape {
				if d != o.shape[i] {
					o.shape[i] = -1
				}
			}
			if !o.known() {
				o.maxBytes = max(bytesOf(a), bytesOf(b))
			}
		}
		if o.maxBytes < 0 {
			o.maxBytes = 0
		}
		res[k] = o
	}
	return res, nil
}

// bytesOf is a known tensor's size in bytes, or -1.
func bytesOf(t *info) int64 {
	if !t.known() {
		return -1
	}
	eb, ok := elemBits[t.elem]
	n := mulDims(t.shape)
	if !ok || n < 0 || n > (1<<62)/eb {
		return -1
	}
	return (n*eb + 7) / 8
}

func inferLoop(r *inferer, n *node, in []*info, s *scope) ([]*info, error) {
	a := n.attrs["body"]
	if a == nil || a.g == nil {
		return nil, fmt.Errorf("want a body graph")
	}
	body := a.g
	carried := max(len(in)-2, 0)
	if len(body.inputs) != carried+2 {
		return nil, fmt.Errorf("%s: %d inputs, want %d (iteration, condition and %d carried)", body.where, len(body.inputs), carried+2, carried)
	}
	if len(body.outputs) < carried+1 {
		return nil, fmt.Errorf("%s: %d outputs, want at least %d", body.where, len(body.outputs), carried+1)
	}
	scans := len(body.outputs) - 1 - carried
	if len(n.outputs) > carried+scans {
		return nil, fmt.Errorf("%d outputs, the body gives %d", len(n.outputs), carried+scans)
	}
	sc := newScope(s)
	formal := []*info{{elem: tInt64, shape: []int64{}}, {elem: tBool, shape: []int64{}}}
	for k := range carried {
		t := in[2+k]
		if t == nil {
			return nil, fmt.Errorf("loop-carried input %d is absent", k)
		}
		formal = append(formal, &info{elem: t.elem, shape: slices.Clone(t.shape)})
	}
	for k, name := range body.inputs {
		if err := sc.define(name, body.where+".input"); err != nil {
			return nil, err
		}
		t := formal[k]
		if v, ok := body.values[name]; ok && v.typed {
			t = merge(r.resolve(name, v, false), t)
		}
		t.val = nil // changes from one iteration to the next
		t.by = "Loop body input"
		sc.infos[name] = t
	}
	if err := r.graph(body, sc); err != nil {
		return nil, err
	}
	trips := int64(-1)
	if m := arg(in, 0); m != nil && m.val != nil && m.val.len() == 1 {
		trips = m.val.ints()[0]
	}
	if c := arg(in, 1); c != nil && c.val != nil && c.val.len() == 1 && c.val.at(0) == 0 {
		trips = 0
	}
	res := make([]*info, len(n.outputs))
	for k := range res {
		bt := sc.lookup(body.outputs[1+k])
		if bt == nil {
			return nil, fmt.Errorf("%s: output %q: not computed in the body", body.where, body.outputs[1+k])
		}
		if k < carried {
			// The final value has the body's shape when the initial one
			// agrees; otherwise it may change from one trip to the next.
			o := &info{elem: bt.elem}
			if init := in[2+k]; slices.Equal(init.shape, bt.shape) {
				o.shape = slices.Clone(bt.shape)
			} else {
				o.dataDep = true
			}
			res[k] = o
			continue
		}
		o := &info{elem: bt.elem, dataDep: trips < 0 || bt.dataDep}
		if bt.shape != nil {
			o.shape = append([]int64{trips}, bt.shape...)
		}
		res[k] = o
	}
	return res, nil
}
