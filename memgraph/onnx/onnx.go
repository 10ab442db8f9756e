package onnx

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/quasim/quasim/memgraph"
)

// Options resolve what a model leaves open.
type Options struct {
	// Dims gives values to symbolic dimensions (dim_param), by name:
	// {"batch": 1}; a key TENSOR[K] gives dim K of that tensor, named or
	// not: {"input[1]": 512}. Shape inference carries the graph inputs'
	// dims through the model; a dim it cannot resolve is an error naming
	// the tensor, unless Unknown is set.
	Dims map[string]int64
	// Unknown, when positive, is the value of every graph input's dim
	// that is still unknown, and of the unknown dims of outputs whose
	// size depends on the data (NonZero, NonMaxSuppression, a Loop with
	// no trip count).
	Unknown int64
	// Values gives the value of integer (or bool) graph inputs the
	// caller will always pass, by name, row-major: {"sr": {16000}}.
	// Folding then treats the input as that constant (the input is still
	// planned): an If whose condition follows from it takes one branch,
	// and only that branch is planned. The plan holds only for runs with
	// these values.
	Values map[string][]int64
}

// Read derives the memory graph of an ONNX model (a serialized
// ModelProto) with the given name (see doc.go).
func Read(data []byte, name string, opt Options) (*memgraph.Graph, error) {
	g, _, err := ReadDetail(data, name, opt)
	return g, err
}

// Subgraph is the plan of one subgraph (an If branch, a Loop body) in an
// arena of its own: the node that holds it reserves the largest such
// arena of its subgraphs while it runs.
type Subgraph struct {
	Where      string // model.graph.node[2].attribute[0].g
	Node       string // the op id of the node holding it, in its graph
	Ops        int
	Tensors    int
	Peak       int64
	LowerBound int64
}

// ReadDetail is Read, and the plans of every subgraph, at any depth,
// in the order they were planned (inner ones first).
func ReadDetail(data []byte, name string, opt Options) (*memgraph.Graph, []Subgraph, error) {
	g, b, err := read(data, name, opt)
	if err != nil {
		return nil, nil, err
	}
	return g, b.subs, nil
}

func read(data []byte, name string, opt Options) (*memgraph.Graph, *builder, error) {
	m, err := parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("onnx %s: %w", name, err)
	}
	for k, v := range opt.Dims {
		if v < 0 {
			return nil, nil, fmt.Errorf("onnx %s: dim %q given as %d, want >= 0", name, k, v)
		}
	}
	r := newInferer(m, opt)
	sc := newScope(nil)
	type use struct {
		at string // TENSOR[K]
		v  int64
	}
	first := map[string]use{} // a symbolic dim's first value among the inputs
	for _, in := range m.main.inputs {
		if !m.main.weights[in] {
			v := m.main.values[in]
			t := r.resolve(in, v, true)
			t.by = "graph input"
			sc.infos[in] = t
			for k, d := range v.dims {
				if d.param == "" || d.set || t.shape[k] < 0 {
					continue
				}
				at := fmt.Sprintf("%s[%d]", in, k)
				if f, ok := first[d.param]; !ok {
					first[d.param] = use{at, t.shape[k]}
				} else if f.v != t.shape[k] {
					return nil, nil, fmt.Errorf("onnx %s: dim %q is %d in graph input %s but %d in graph input %s: "+
						"inputs that share a symbolic dim must agree (give it one value, --dim %s=N)", name, d.param, f.v, f.at, t.shape[k], at, d.param)
				}
			}
		}
	}
	if err := r.inputValues(m.main, sc); err != nil {
		return nil, nil, fmt.Errorf("onnx %s: %w", name, err)
	}
	if err := r.graph(m.main, sc); err != nil {
		return nil, nil, fmt.Errorf("onnx %s: %w", name, err)
	}
	b := &builder{r: r}
	g, err := b.build(m.main, name)
	if err != nil {
		return nil, nil, fmt.Errorf("onnx %s: %w", name, err)
	}
	g.Source = "onnx graph"
	if err := g.Validate(); err != nil {
		return nil, nil, fmt.Errorf("onnx %s: %w", name, err)
	}
	return g, b, nil
}

// SubgraphSuffix ends the id of the tensor that holds a control-flow
// node's subgraphs (If's branches, Loop's body) while the node runs.
const SubgraphSuffix = "#subgraphs"

type builder struct {
	r    *inferer
	subs []Subgraph
}

// build turns one graph (the main graph or a subgraph) into a memory
// graph. Names of an outer scope are not planned here: the node that
// holds the subgraph reads them (see implicitInputs).
func (b *builder) build(gr *graph, name string) (*memgraph.Graph, error) {
	sc := b.r.scopes[gr]
	g := &memgraph.Graph{Name: name, Alignment: memgraph.DefaultAlign}
	idx := map[string]int{} // tensor name → g.Tensors index
	add := func(tname string, t memgraph.Tensor, isInput bool) error {
		if len(g.Tensors) >= memgraph.MaxTensors {
			return fmt.Errorf("over memgraph's limit of %d tensors", memgraph.MaxTensors)
		}
		n, err := b.size(gr, tname, isInput)
		if err != nil {
			return err
		}
		t.ID, t.Bytes = tname, n
		g.Tensors = append(g.Tensors, t)
		idx[tname] = len(g.Tensors) - 1
		return nil
	}
	for _, in := range gr.inputs {
		if gr.weights[in] {
			continue // an initializer listed as an input (IR < 4): a weight
		}
		if _, dup := idx[in]; dup {
			return nil, fmt.Errorf("%s.input %q: listed twice", gr.where, in)
		}
		if err := add(in, memgraph.Tensor{Input: true}, true); err != nil {
			return nil, err
		}
	}
	opIDs := map[string]bool{}
	consume := func(in, id string) {
		k, ok := idx[in]
		if !ok {
			return // a weight, a folded constant, or an outer scope's name
		}
		if c := g.Tensors[k].Consumers; len(c) == 0 || c[len(c)-1] != id {
			g.Tensors[k].Consumers = append(c, id)
		}
	}
	for i, n := range gr.nodes {
		if (n.opType == "Constant" && (n.domain == "" || n.domain == "ai.onnx")) || sc.folded[n] {
			// A constant, or a node folded into one: the runtime keeps it
			// as an initializer, so it is not an op and not planned.
			continue
		}
		id := n.name
		if id == "" || opIDs[id] {
			id = "node" + strconv.Itoa(i)
			for k := 1; opIDs[id]; k++ {
				id = "node" + strconv.Itoa(i) + "_" + strconv.Itoa(k)
			}
		}
		opIDs[id] = true
		kind := n.opType
		if n.domain != "" && n.domain != "ai.onnx" {
			kind = n.domain + ":" + n.opType
		}
		g.Ops = append(g.Ops, memgraph.Op{ID: id, Kind: kind})
		for _, in := range n.inputs {
			if in != "" {
				consume(in, id)
			}
		}
		subs := n.subgraphs()
		if len(subs) > 0 {
			if n.opType != "If" && n.opType != "Loop" {
				return nil, fmt.Errorf("%s: %s: not supported (memgraph plans the subgraphs of If and Loop only)", n.where, n.opType)
			}
			// The subgraphs read outer names while the node runs: they
			// live until it ends (those of an If's branch not taken
			// too: CheckPlan derives lifetimes from every subgraph).
			for _, in := range implicitInputs(n) {
				consume(in, id)
			}
		}
		// The subgraphs are sized first: a refusal inside the branch that
		// runs names the tensor there, the cause of an unsized output.
		var need int64
		if len(subs) > 0 {
			var err error
			if need, err = b.subgraphBytes(id, b.r.runs(n)); err != nil {
				return nil, b.r.ifHint(n, err)
			}
		}
		for _, out := range n.outputs {
			if out == "" {
				continue // an absent optional output
			}
			if _, dup := idx[out]; dup || gr.weights[out] {
				return nil, fmt.Errorf("%s: output %q: already produced (ONNX graphs are single-assignment)", n.where, out)
			}
			if err := add(out, memgraph.Tensor{Producer: id}, false); err != nil {
				return nil, fmt.Errorf("%s: %w", n.where, err)
			}
		}
		if len(subs) > 0 {
			sid := id + SubgraphSuffix
			for k := 1; idxHas(idx, sid); k++ {
				sid = id + SubgraphSuffix + strconv.Itoa(k)
			}
			g.Tensors = append(g.Tensors, memgraph.Tensor{ID: sid, Bytes: need, Producer: id})
			idx[sid] = len(g.Tensors) - 1
		}
	}
	for _, out := range gr.outputs {
		if k, ok := idx[out]; ok {
			g.Tensors[k].Output = true
		} else if sc.lookup(out) == nil {
			return nil, fmt.Errorf("%s.output %q: no node produces it and it is not a graph input", gr.where, out)
		}
	}
	return g, nil
}

func idxHas(idx map[string]int, k string) bool {
	_, ok := idx[k]
	return ok
}

// subgraphBytes plans each subgraph of n in an arena of its own and
// returns the largest: the branches of an If never run together, a Loop
// body's tensors die at the end of each trip.
func (b *builder) subgraphBytes(id string, subs []*graph) (int64, error) {
	var need int64
	for _, sg := range subs {
		g, err := b.build(sg, sg.where)
		if err != nil {
			return 0, err
		}
		if err := g.Validate(); err != nil {
			return 0, fmt.Errorf("%s: %w", sg.where, err)
		}
		if len(g.Ops) == 0 && len(g.Tensors) == 0 {
			continue
		}
		res, err := memgraph.Plan(g, memgraph.Options{})
		if err != nil {
			return 0, fmt.Errorf("%s: %w", sg.where, err)
		}
		need = max(need, res.Peak)
		b.subs = append(b.subs, Subgraph{Where: sg.where, Node: id, Ops: len(g.Ops), Tensors: len(g.Tensors),
			Peak: res.Peak, LowerBound: res.LowerBound})
	}
	return need, nil
}

// implicitInputs lists the names n's subgraphs (at any depth) read but
// do not define: names of the scopes around n.
func implicitInputs(n *node) []string {
	defined := map[string]bool{}
	var read []string
	var walk func(g *graph)
	walk = func(g *graph) {
		for _, in := range g.inputs {
			defined[in] = true
		}
		for k := range g.weights {
			defined[k] = true
		}
		for _, x := range g.nodes {
			for _, out := range x.outputs {
				defined[out] = true
			}
		}
		for _, x := range g.nodes {
			read = append(read, x.inputs...)
			for _, sg := range x.subgraphs() {
				walk(sg)
			}
		}
		read = append(read, g.outputs...)
	}
	for _, sg := range n.subgraphs() {
		walk(sg)
	}
	var out []string
	seen := map[string]bool{}
	for _, name := range read {
		if name != "" && !defined[name] && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// size is tensor tname's size in bytes, from what inference knows (which
// merged the model's value_info).
func (b *builder) size(gr *graph, tname string, isInput bool) (int64, error) {
	t := b.r.scopes[gr].infos[tname]
	if t == nil {
		t = &info{}
	}
	v := gr.values[tname]
	if t.shape == nil && t.maxBytes > 0 {
		return t.maxBytes, nil
	}
	why := "run ONNX shape inference on the model first"
	switch {
	case t.unsupported != "":
		why = "memgraph's shape inference does not cover " + t.unsupported + " and the model gives no value_info for it"
	case t.why != "":
		why = t.why + ", and the model gives no value_info for it"
	case t.by != "" && t.by != "graph input":
		why = "shape inference could not size it from its inputs (made by " + t.by + ") and the model gives no value_info for it"
	}
	switch {
	case t.elem == 0:
		return 0, fmt.Errorf("tensor %q: no type in the graph's input, output or value_info (%s)", tname, why)
	case t.shape == nil:
		return 0, fmt.Errorf("tensor %q: no shape in the graph's input, output or value_info (%s)", tname, why)
	}
	eb, ok := elemBits[t.elem]
	if !ok {
		return 0, fmt.Errorf("tensor %q: elem_type %d has no fixed size (want a numeric TensorProto.DataType)", tname, t.elem)
	}
	n := uint64(1)
	for k, x := range t.shape {
		if x < 0 && t.dataDep && b.r.opt.Unknown > 0 {
			x = b.r.opt.Unknown
		}
		if x < 0 {
			if t.maxBytes > 0 {
				return t.maxBytes, nil
			}
			var param string
			if k < len(v.dims) {
				param = v.dims[k].param
			}
			switch {
			case isInput && param != "":
				return 0, fmt.Errorf("tensor %q: dim %d is symbolic (%q): give it a value", tname, k, param)
			case isInput:
				return 0, fmt.Errorf("tensor %q: dim %d is unknown: give it a value as %s[%d]=N, or one for every unknown dim", tname, k, tname, k)
			case t.dataDep:
				return 0, fmt.Errorf("tensor %q: dim %d depends on the data (%s): give a value for unknown dims", tname, k, t.by)
			case t.unsupported != "" || t.why != "":
				return 0, fmt.Errorf("tensor %q: dim %d is unknown: %s", tname, k, why)
			}
			return 0, fmt.Errorf("tensor %q: dim %d is unknown after shape inference (made by %s)", tname, k, t.by)
		}
		hi, lo := bits.Mul64(n, uint64(x))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, fmt.Errorf("tensor %q: shape overflows", tname)
		}
		n = lo
	}
	hi, lo := bits.Mul64(n, uint64(eb))
	if hi != 0 || lo > uint64(memgraph.MaxTensorBytes)*8 {
		return 0, fmt.Errorf("tensor %q: %d elements of %d bits, over memgraph's limit of %d bytes per tensor", tname, n, eb, int64(memgraph.MaxTensorBytes))
	}
	return int64((lo + 7) / 8), nil
}

// ParseValue reads NAME=V[,V...], the value of an integer graph input
// (row-major) as a flag or a query parameter gives it.
func ParseValue(s string) (string, []int64, error) {
	name, val, ok := strings.Cut(s, "=")
	if !ok || name == "" || val == "" {
		return "", nil, fmt.Errorf("value %q: want NAME=V[,V...], integers", s)
	}
	parts := strings.Split(val, ",")
	if len(parts) > maxFold {
		return "", nil, fmt.Errorf("value %q: %d elements, at most %d", s, len(parts), maxFold)
	}
	out := make([]int64, len(parts))
	for k, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return "", nil, fmt.Errorf("value %q: element %d (%q) is not an integer: want NAME=V[,V...]", s, k, p)
		}
		out[k] = v
	}
	return name, out, nil
}

// ParseDim reads NAME=VALUE, a symbolic dimension's value as a flag or a
// query parameter gives it (NAME may be TENSOR[K], dim K of a tensor).
func ParseDim(s string) (string, int64, error) {
	name, val, ok := strings.Cut(s, "=")
	v, err := strconv.ParseInt(val, 10, 64)
	if !ok || name == "" || err != nil || v < 0 {
		return "", 0, fmt.Errorf("dim %q: want NAME=VALUE, a non-negative integer", s)
	}
	return name, v, nil
}
