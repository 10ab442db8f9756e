package onnx

import (
	"fmt"
	"slices"
	"strings"
)

// Shape inference through If and Loop: each subgraph is inferred in its
// own scope, chained to the node's, so outer-scope names resolve.

func inferIf(r *inferer, n *node, in []*info, s *scope) ([]*info, error) {
	th, el := n.attrs["then_branch"], n.attrs["else_branch"]
	if th == nil || th.g == nil || el == nil || el.g == nil {
		return nil, fmt.Errorf("want then_branch and else_branch graphs")
	}
	// A constant condition takes one branch: the other never runs, so it
	// is neither inferred nor planned (its shapes may not even follow
	// from these inputs).
	taken := -1
	if c := in[0]; c != nil && c.val != nil && c.val.len() == 1 {
		taken = 1
		if c.val.at(0) != 0 {
			taken = 0
		}
		r.taken[n] = []*graph{th.g, el.g}[taken]
	}
	var outs [2][]*info
	for b, g := range []*graph{th.g, el.g} {
		if taken >= 0 && b != taken {
			continue
		}
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
	if b := taken; b >= 0 {
		res := make([]*info, len(outs[b]))
		for k, t := range outs[b] {
			res[k] = &info{elem: t.elem, shape: slices.Clone(t.shape), val: t.val, dataDep: t.dataDep,
				maxBytes: t.maxBytes, why: t.why, unsupported: t.unsupported}
			if !res[k].known() && res[k].maxBytes <= 0 && res[k].why == "" {
				res[k].why = fmt.Sprintf("If output %d: the %s branch, which the constant condition %q takes, gives it no size",
					k, [2]string{"then", "else"}[b], n.inputs[0])
			}
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
		if a.shape != nil && b.shape != nil && len(a.shape) == len(b.shape) {
			o.shape = slices.Clone(a.shape)
			for i, d := range b.shape {
				if d != o.shape[i] {
					o.shape[i] = -1
				}
			}
		}
		// Either branch may run: the output is bounded only when both
		// branches size it.
		if ba, bb := bytesOf(a), bytesOf(b); !o.known() && ba >= 0 && bb >= 0 {
			o.maxBytes = max(ba, bb)
		} else if !o.known() {
			o.why = r.unsizedBranch(n, k, [2]*info{a, b})
		}
		res[k] = o
	}
	return res, nil
}

// unsizedBranch says why output k of If n has no size, its branches
// sized as outs: which branch leaves it unknown, and what would make the
// If take one branch.
func (r *inferer) unsizedBranch(n *node, k int, outs [2]*info) string {
	var which []string
	for b, t := range outs {
		if bytesOf(t) < 0 {
			which = append(which, [2]string{"then", "else"}[b])
		}
	}
	cond := n.inputs[0]
	msg := fmt.Sprintf("If output %d: the %s branch gives it no size and the condition %q is not a constant", k, strings.Join(which, " and "), cond)
	if ins := r.inputsOf(cond); len(ins) > 0 {
		return msg + fmt.Sprintf(" (it follows from graph input %s: give a value with --value NAME=V so the If takes one branch)", strings.Join(ins, ", "))
	}
	return msg + " (it follows from no graph input: it depends on weights or the data)"
}

// ifHint adds to err, a refusal inside a subgraph of n, what would make
// n take one branch when n is an If whose condition is not a constant.
func (r *inferer) ifHint(n *node, err error) error {
	if _, ok := r.taken[n]; ok || n.opType != "If" || len(n.inputs) == 0 {
		return err
	}
	if ins := r.inputsOf(n.inputs[0]); len(ins) > 0 {
		return fmt.Errorf("%w; %s: its condition %q is not a constant and follows from graph input %s: "+
			"a value (--value NAME=V) makes it take one branch, and only that branch is planned", err, n.where, n.inputs[0], strings.Join(ins, ", "))
	}
	return err
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
