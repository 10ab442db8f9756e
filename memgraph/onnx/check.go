package onnx

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Placement is one planned tensor of a model's main graph: its id (an
// ONNX tensor name, or a control-flow node's id with SubgraphSuffix),
// its offset in the arena and its bytes.
type Placement struct {
	Tensor string
	Offset int64
	Bytes  int64
}

// CheckPlan verifies a plan of a model's main graph against the model
// itself, independently of Read and of memgraph: it derives each
// tensor's lifetime from the ONNX nodes (from the node that writes it,
// or the start for a graph input, to the last node that reads it,
// directly or from inside any subgraph at any depth, or the end for a
// graph output; a node's subgraph arena lives while that node runs) and
// fails, naming both tensors, when two tensors alive at once share a
// byte, or when the plan places a name the model does not write. A node
// none of whose outputs the plan places is taken as folded away (it does
// not run, so it reads nothing).
func CheckPlan(data []byte, plan []Placement) error {
	m, err := parse(data)
	if err != nil {
		return fmt.Errorf("check plan: %w", err)
	}
	g := m.main
	end := len(g.nodes)
	first, last := map[string]int{}, map[string]int{}
	for _, in := range g.inputs {
		first[in], last[in] = -1, -1
	}
	placed := map[string]bool{}
	for _, p := range plan {
		placed[p.Tensor] = true
	}
	// holder: the node a "#subgraphs" tensor's op id names, as Read
	// names ops: its name, else nodeN. Read skips constants and folded
	// nodes, so a name can also be a skipped node's: the first node of
	// that id that holds subgraphs is the one.
	holder := map[string]int{}
	ids := func(i int, n *node) []string {
		if n.name != "" {
			return []string{n.name, "node" + strconv.Itoa(i)}
		}
		return []string{"node" + strconv.Itoa(i)}
	}
	for i, n := range g.nodes {
		if len(n.subgraphs()) == 0 {
			continue
		}
		for _, id := range ids(i, n) {
			if _, dup := holder[id]; !dup {
				holder[id] = i
			}
		}
	}
	arena := map[int]bool{}
	for _, p := range plan {
		if id, _, ok := strings.Cut(p.Tensor, SubgraphSuffix); ok {
			if i, isNode := holder[id]; isNode {
				arena[i] = true
			}
		}
	}
	for i, n := range g.nodes {
		// A node none of whose outputs the plan places does not run: it
		// was folded into a constant (Shape of a known shape).
		runs := arena[i]
		for _, out := range n.outputs {
			if _, ok := first[out]; !ok && out != "" {
				first[out], last[out] = i, i
			}
			runs = runs || placed[out]
		}
		if !runs {
			continue
		}
		for _, in := range readsOf(n) {
			if _, ok := first[in]; ok {
				last[in] = max(last[in], i)
			}
		}
	}
	for _, out := range g.outputs {
		if _, ok := first[out]; ok {
			last[out] = end
		}
	}
	type live struct {
		p           Placement
		first, last int
	}
	ls := make([]live, 0, len(plan))
	for _, p := range plan {
		if p.Offset < 0 || p.Bytes < 0 {
			return fmt.Errorf("check plan: tensor %q: offset %d, bytes %d", p.Tensor, p.Offset, p.Bytes)
		}
		if f, ok := first[p.Tensor]; ok {
			ls = append(ls, live{p, f, last[p.Tensor]})
			continue
		}
		id, _, ok := strings.Cut(p.Tensor, SubgraphSuffix)
		if i, isNode := holder[id]; ok && isNode && len(g.nodes[i].subgraphs()) > 0 {
			ls = append(ls, live{p, i, i})
			continue
		}
		return fmt.Errorf("check plan: tensor %q: the model's main graph does not write it", p.Tensor)
	}
	slices.SortFunc(ls, func(a, b live) int { return cmp.Compare(a.first, b.first) })
	var active []live
	for _, x := range ls {
		active = slices.DeleteFunc(active, func(y live) bool { return y.last < x.first })
		for _, y := range active {
			if x.p.Bytes > 0 && y.p.Bytes > 0 && x.p.Offset < y.p.Offset+y.p.Bytes && y.p.Offset < x.p.Offset+x.p.Bytes {
				return fmt.Errorf("check plan: tensors %q (nodes %d..%d) and %q (nodes %d..%d) are alive together and share bytes [%d, %d)",
					y.p.Tensor, y.first, y.last, x.p.Tensor, x.first, x.last,
					max(x.p.Offset, y.p.Offset), min(x.p.Offset+x.p.Bytes, y.p.Offset+y.p.Bytes))
			}
		}
		active = append(active, x)
	}
	return nil
}

// readsOf lists every name node n reads: its inputs, and every name its
// subgraphs read, at any depth (a subgraph's own names included; the
// caller only looks up names of the main graph).
func readsOf(n *node) []string {
	out := slices.Clone(n.inputs)
	var walk func(g *graph)
	walk = func(g *graph) {
		for _, x := range g.nodes {
			out = append(out, x.inputs...)
			for _, sg := range x.subgraphs() {
				walk(sg)
			}
		}
		out = append(out, g.outputs...)
	}
	for _, sg := range n.subgraphs() {
		walk(sg)
	}
	return out
}
