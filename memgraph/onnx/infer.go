package onnx

import (
	"fmt"
	"math"
	"slices"
)

// info is what inference knows of one tensor: its element type (0:
// unknown), its shape (nil: rank unknown; a dim of -1: unknown) and, when
// folding computed it, its value.
type info struct {
	elem  int64
	shape []int64
	val   *cval
	// dataDep: the size depends on the data (NonZero's output), so only
	// Options.Unknown can stand in for it.
	dataDep bool
	// maxBytes, when positive, bounds the size of a tensor whose shape
	// is unknown because If's branches give different shapes.
	maxBytes int64
	// by names the node that made it, for errors: "Relu (model.graph.node[3])".
	by string
	// unsupported is the op type inference does not cover, if that is why
	// the shape is unknown.
	unsupported string
	// why says why an If's output has no size, for the refusal.
	why string
}

func (t *info) known() bool {
	if t == nil || t.shape == nil || t.elem == 0 {
		return false
	}
	for _, d := range t.shape {
		if d < 0 {
			return false
		}
	}
	return true
}

// scope maps names to what inference knows, a subgraph's scope chained
// to the scope of the graph around it (ONNX's outer-scope names).
type scope struct {
	parent *scope
	infos  map[string]*info
	folded map[*node]bool // nodes whose outputs are all constants
}

func newScope(parent *scope) *scope {
	return &scope{parent: parent, infos: map[string]*info{}, folded: map[*node]bool{}}
}

// define refuses a subgraph's name that an outer scope already has:
// ONNX names are unique across scopes, and a shadowed name would make
// the outer tensor's lifetime ambiguous.
func (s *scope) define(name, where string) error {
	if s.parent != nil && s.parent.lookup(name) != nil {
		return fmt.Errorf("%s: name %q is already defined in an outer scope (ONNX names are unique across scopes)", where, name)
	}
	return nil
}

func (s *scope) lookup(name string) *info {
	for ; s != nil; s = s.parent {
		if t, ok := s.infos[name]; ok {
			return t
		}
	}
	return nil
}

// inferer runs shape inference and constant folding over a model.
type inferer struct {
	opset  int64
	opt    Options
	scopes map[*graph]*scope
	// budget is how many more constant elements folding may keep, so a
	// model of many big constants cannot make the reader hold much.
	budget int
	// taken is the branch an If with a constant condition runs.
	taken map[*node]*graph
	// prod maps every name of every graph to the node writing it, and
	// inputs holds the main graph's inputs (not weights), to name the
	// inputs an If's condition follows from.
	prod   map[string]*node
	inputs map[string]bool
}

// foldBudget bounds the elements of all folded constants of one model.
const foldBudget = 1 << 22

func newInferer(m *model, opt Options) *inferer {
	op := m.opset
	if op == 0 {
		op = 21
	}
	r := &inferer{opset: op, opt: opt, scopes: map[*graph]*scope{}, budget: foldBudget,
		taken: map[*node]*graph{}, prod: map[string]*node{}, inputs: map[string]bool{}}
	for _, in := range m.main.inputs {
		if !m.main.weights[in] {
			r.inputs[in] = true
		}
	}
	var walk func(g *graph)
	walk = func(g *graph) {
		for _, n := range g.nodes {
			for _, out := range n.outputs {
				r.prod[out] = n
			}
			for _, sg := range n.subgraphs() {
				walk(sg)
			}
		}
	}
	walk(m.main)
	return r
}

// runs is the subgraphs of n that run: the branch taken of an If whose
// condition folded, else all of them.
func (r *inferer) runs(n *node) []*graph {
	if g, ok := r.taken[n]; ok {
		return []*graph{g}
	}
	return n.subgraphs()
}

// inputsOf lists the main graph's inputs that name's value follows from,
// through the nodes that compute it.
func (r *inferer) inputsOf(name string) []string {
	var out []string
	seen := map[string]bool{}
	stack := []string{name}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x == "" || seen[x] {
			continue
		}
		seen[x] = true
		if r.inputs[x] {
			out = append(out, x)
		}
		if n := r.prod[x]; n != nil {
			stack = append(stack, n.inputs...)
		}
	}
	slices.Sort(out)
	return out
}

// inputValues gives the main graph's inputs named in Options.Values
// their values, as constants folding reads.
func (r *inferer) inputValues(g *graph, s *scope) error {
	for _, name := range sortedKeys(r.opt.Values) {
		vals := r.opt.Values[name]
		t := s.infos[name]
		switch {
		case t == nil && g.weights[name]:
			return fmt.Errorf("value for %q: it is an initializer (a weight), not an input the caller passes", name)
		case t == nil:
			return fmt.Errorf("value for %q: not a graph input of the model (inputs: %v)", name, g.inputs)
		case t.elem != tBool && (isFloat(t.elem) || elemBits[t.elem] == 0):
			return fmt.Errorf("value for %q: graph input of element type %d, want an integer or bool input", name, t.elem)
		}
		n := mulDims(t.shape)
		if t.shape == nil || n < 0 {
			return fmt.Errorf("value for %q: its shape is not known (give its dims with --dim first)", name)
		}
		if n != int64(len(vals)) {
			return fmt.Errorf("value for %q: %d elements given, the input's shape %v holds %d", name, len(vals), t.shape, n)
		}
		if r.budget -= len(vals); r.budget < 0 {
			return fmt.Errorf("value for %q: over the folding budget of %d elements", name, foldBudget)
		}
		for k, v := range vals {
			if t.elem == tBool && v != 0 && v != 1 {
				return fmt.Errorf("value for %q: element %d is %d, a bool input takes 0 or 1", name, k, v)
			}
		}
		t.val = &cval{shape: slices.Clone(t.shape), i: slices.Clone(vals)}
	}
	return nil
}

// resolve turns a value_info into an info, naming symbolic dims from
// Options.Dims (by name, or as TENSOR[K] for dim K of tensor name) and,
// when useUnknown, the rest from Options.Unknown.
func (r *inferer) resolve(name string, v value, useUnknown bool) *info {
	t := &info{elem: v.elem}
	if !v.typed {
		return t
	}
	if v.dims == nil {
		return t
	}
	t.shape = make([]int64, len(v.dims))
	for k, d := range v.dims {
		x := int64(-1)
		if d.set && d.v >= 0 {
			x = d.v
		} else if g, ok := r.opt.Dims[fmt.Sprintf("%s[%d]", name, k)]; ok {
			x = g
		} else if g, ok := r.opt.Dims[d.param]; ok && d.param != "" {
			x = g
		} else if useUnknown && r.opt.Unknown > 0 {
			x = r.opt.Unknown
		}
		t.shape[k] = x
	}
	return t
}

// graph infers every node of g in order, in scope s (which already holds
// g's inputs).
func (r *inferer) graph(g *graph, s *scope) error {
	r.scopes[g] = s
	for _, name := range sortedKeys(g.weights) {
		if err := s.define(name, g.where+".initializer"); err != nil {
			return err
		}
	}
	for _, n := range g.nodes {
		for _, out := range n.outputs {
			if out != "" {
				if err := s.define(out, n.where); err != nil {
					return err
				}
			}
		}
	}
	for name, t := range g.inits {
		in := &info{elem: t.dtype, shape: append([]int64{}, t.dims...), by: "initializer"}
		c, err := constFromTensor(t)
		if err != nil {
			return err
		}
		if c != nil {
			if r.budget -= c.len(); r.budget < 0 {
				c = nil
			}
		}
		in.val = c
		s.infos[name] = in
	}
	for name := range g.weights {
		if _, ok := s.infos[name]; !ok {
			s.infos[name] = &info{by: "sparse initializer"}
		}
	}
	for _, n := range g.nodes {
		outs, err := r.node(n, s)
		if err != nil {
			return fmt.Errorf("%s: %w", n.where, err)
		}
		all := len(n.outputs) > 0 && len(n.subgraphs()) == 0
		for k, name := range n.outputs {
			if name == "" {
				continue
			}
			var t *info
			if k < len(outs) && outs[k] != nil {
				t = outs[k]
			} else {
				t = &info{}
			}
			t.by = n.opType + " (" + n.where + ")"
			if v, ok := g.values[name]; ok && v.typed {
				t = merge(r.resolve(name, v, false), t)
			}
			if t.val != nil {
				if r.budget -= t.val.len(); r.budget < 0 {
					t.val = nil // over the budget: planned, not folded
				}
			}
			if t.val == nil {
				all = false
			}
			s.infos[name] = t
		}
		if all {
			s.folded[n] = true
		}
	}
	return nil
}

// merge combines value_info's declared shape with the inferred one.
// A shape inference computed from the given inputs wins (an exporter's
// value_info was traced at other sizes); the declared element type wins,
// the declaration fills the dims
// inference left unknown, or stands when inference knows nothing.
func merge(decl, inf *info) *info {
	out := *inf
	if decl.elem != 0 && decl.elem != out.elem {
		out.elem, out.val = decl.elem, nil // the element type is declared, not traced
	}
	switch {
	case inf.known() || decl.shape == nil:
	case inf.shape == nil || len(inf.shape) != len(decl.shape):
		out.shape = decl.shape
		out.val = nil
	default:
		out.shape = slices.Clone(inf.shape)
		for k, d := range decl.shape {
			if out.shape[k] < 0 {
				out.shape[k] = d
			}
		}
	}
	return &out
}

// node infers one node's outputs.
func (r *inferer) node(n *node, s *scope) ([]*info, error) {
	in := make([]*info, len(n.inputs))
	for k, name := range n.inputs {
		if name == "" {
			continue
		}
		in[k] = s.lookup(name)
		if in[k] == nil {
			return nil, fmt.Errorf("input %q: no producer (not a graph input, an initializer or an earlier node's output)", name)
		}
	}
	if n.domain != "" && n.domain != "ai.onnx" {
		return r.unsupported(n), nil
	}
	if f, ok := opInfer[n.opType]; ok {
		// Every operator inferred here but Constant (no inputs) and Loop
		// (an optional trip count) requires its first input.
		if (len(in) == 0 || in[0] == nil) && n.opType != "Constant" && n.opType != "Loop" {
			return nil, fmt.Errorf("%s: its first input is absent (ONNX requires it)", n.opType)
		}
		return f(r, n, in, s)
	}
	return r.unsupported(n), nil
}

func (r *inferer) unsupported(n *node) []*info {
	outs := make([]*info, len(n.outputs))
	for k := range outs {
		outs[k] = &info{unsupported: n.opType}
	}
	return outs
}

// input k of in, or nil when absent.
func arg(in []*info, k int) *info {
	if k < len(in) {
		return in[k]
	}
	return nil
}

func (n *node) attrInt(name string, def int64) int64 {
	if a, ok := n.attrs[name]; ok {
		return a.i
	}
	return def
}

func (n *node) attrInts(name string) ([]int64, bool) {
	if a, ok := n.attrs[name]; ok {
		return a.ints, true
	}
	return nil, false
}

func (n *node) attrFloats(name string) ([]float32, bool) {
	if a, ok := n.attrs[name]; ok {
		return a.floats, true
	}
	return nil, false
}

// intsArg is a constant integer input, or the attribute of that name
// (older opsets gave as attributes what newer ones take as inputs).
func intsArg(n *node, in []*info, k int, name string) ([]int64, bool) {
	if t := arg(in, k); t != nil {
		if t.val == nil {
			return nil, false
		}
		return t.val.ints(), true
	}
	return n.attrInts(name)
}

// normAxis maps a possibly negative axis into [0, rank).
func normAxis(a, rank int64) (int64, error) {
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		return 0, fmt.Errorf("axis %d out of range for rank %d", a, rank)
	}
	return a, nil
}

func same(t *info) *info {
	if t == nil {
		return &info{}
	}
	return &info{elem: t.elem, shape: slices.Clone(t.shape)}
}

func withElem(t *info, elem int64) *info {
	o := same(t)
	o.elem = elem
	return o
}

func one(t *info) []*info { return []*info{t} }

// broadcast is numpy's multidirectional broadcasting of shapes.
func broadcast(shapes ...[]int64) ([]int64, error) {
	rank := 0
	for _, s := range shapes {
		if s == nil {
			return nil, nil
		}
		rank = max(rank, len(s))
	}
	out := make([]int64, rank)
	for k := range out {
		out[k] = 1
	}
	for _, s := range shapes {
		off := rank - len(s)
		for k, d := range s {
			o := &out[off+k]
			switch {
			case d == 1:
			case *o == 1:
				*o = d
			case d < 0:
			case *o < 0:
				*o = d
			case *o != d:
				return nil, fmt.Errorf("shapes %v do not broadcast", shapes)
			}
		}
	}
	return out, nil
}

// mulDims multiplies dims, -1 when any is unknown.
func mulDims(ds []int64) int64 {
	p := int64(1)
	for _, d := range ds {
		if d < 0 {
			return -1
		}
		if d != 0 && p > math.MaxInt64/d {
			return -1
		}
		p *= d
	}
	return p
}
