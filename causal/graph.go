package causal

import (
	"fmt"
	"slices"
	"strings"
)

// Graph is the dependency graph of one pipeline's spans. It is read-only
// once built, so one Graph may serve concurrent readers.
type Graph struct {
	spans   []Span
	kernels []string // distinct kernel names, sorted
	kernel  []int32  // span → index into kernels
	dur     []int64  // recorded durations
	start   []int64  // recorded starts
	lag     []int64  // start minus the latest predecessor end (at most 0 for a host wait); unused for roots
	host    []bool   // HostWait: starts no earlier than its recorded start
	predOff []int32  // preds of span i are preds[predOff[i]:predOff[i+1]]
	preds   []int32  //
	succOff []int32  // the same for successors
	succs   []int32  //
	order   []int32  // a topological order
	t0      int64    // earliest recorded start
	base    int64    // recorded end-to-end time: to the latest end of a sink
	// sink and reach are nil in a whole graph (every span is a sink);
	// in a view made by EndAt, the sinks and the spans some sink depends
	// on, even through others (sinks included).
	sink, reach []bool
}

// Build validates spans and makes their graph. The graph keeps spans; the
// caller must not change them afterwards.
func Build(spans []Span) (*Graph, error) {
	if len(spans) == 0 {
		return nil, fmt.Errorf("%w: no spans", ErrInvalidSpan)
	}
	if len(spans) > MaxSpans {
		return nil, fmt.Errorf("%w: %d spans, at most %d", ErrInvalidSpan, len(spans), MaxSpans)
	}
	byID, err := checkFields(spans)
	if err != nil {
		return nil, err
	}
	tracks, err := streamOrder(spans)
	if err != nil {
		return nil, err
	}
	n := len(spans)
	g := &Graph{spans: spans, dur: make([]int64, n), start: make([]int64, n), lag: make([]int64, n), host: make([]bool, n)}
	g.indexKernels()
	prev := make([]int32, n)
	for i := range prev {
		prev[i] = -1
	}
	for _, tr := range tracks {
		for k := 1; k < len(tr); k++ {
			prev[tr[k]] = tr[k-1]
		}
	}
	g.predOff = make([]int32, n+1)
	for i, s := range spans {
		g.preds = append(g.preds, s.depsIndices(byID, prev[i])...)
		seg := g.preds[g.predOff[i]:]
		slices.Sort(seg)
		g.preds = g.preds[:int(g.predOff[i])+len(slices.Compact(seg))]
		g.predOff[i+1] = int32(len(g.preds))
	}
	g.succOff, g.succs = reverse(g.predOff, g.preds)
	if err := g.sort(); err != nil {
		return nil, err
	}
	g.t0 = spans[0].Start
	end := spans[0].End
	for i, s := range spans {
		g.dur[i], g.start[i] = s.Duration(), s.Start
		g.t0, end = min(g.t0, s.Start), max(end, s.End)
		if p := g.predsOf(i); len(p) > 0 {
			latest := spans[p[0]].End
			for _, j := range p[1:] {
				latest = max(latest, spans[j].End)
			}
			g.lag[i] = s.Start - latest
			if s.HostWait {
				// Released by the host at its recorded start: its gap
				// is not kept, only a negative lag (it started before
				// its predecessors' end, as a launch may).
				g.host[i], g.lag[i] = true, min(g.lag[i], 0)
			}
		}
	}
	g.base = end - g.t0
	return g, nil
}

func (s Span) depsIndices(byID map[uint64]int, prev int32) []int32 {
	out := make([]int32, 0, len(s.Deps)+1)
	if prev >= 0 {
		out = append(out, prev)
	}
	for _, d := range s.Deps {
		out = append(out, int32(byID[d]))
	}
	return out
}

func (g *Graph) indexKernels() {
	ids := map[string]int32{}
	for _, s := range g.spans {
		if _, ok := ids[s.Kernel]; !ok {
			ids[s.Kernel] = 0
			g.kernels = append(g.kernels, s.Kernel)
		}
	}
	slices.Sort(g.kernels)
	for k, name := range g.kernels {
		ids[name] = int32(k)
	}
	g.kernel = make([]int32, len(g.spans))
	for i, s := range g.spans {
		g.kernel[i] = ids[s.Kernel]
	}
}

// reverse turns an adjacency list (CSR) around.
func reverse(off, adj []int32) ([]int32, []int32) {
	n := len(off) - 1
	roff := make([]int32, n+1)
	for _, j := range adj {
		roff[j+1]++
	}
	for i := range n {
		roff[i+1] += roff[i]
	}
	radj := make([]int32, len(adj))
	fill := slices.Clone(roff[:n])
	for i := range n {
		for _, j := range adj[off[i]:off[i+1]] {
			radj[fill[j]] = int32(i)
			fill[j]++
		}
	}
	return roff, radj
}

// sort fills g.order by Kahn's algorithm, or names a cycle.
func (g *Graph) sort() error {
	n := len(g.spans)
	indeg := make([]int32, n)
	for i := range n {
		indeg[i] = g.predOff[i+1] - g.predOff[i]
	}
	g.order = make([]int32, 0, n)
	for i := range n {
		if indeg[i] == 0 {
			g.order = append(g.order, int32(i))
		}
	}
	for k := 0; k < len(g.order); k++ {
		for _, c := range g.succsOf(int(g.order[k])) {
			if indeg[c]--; indeg[c] == 0 {
				g.order = append(g.order, c)
			}
		}
	}
	if len(g.order) == n {
		return nil
	}
	return g.cycleError(indeg)
}

// cycleError walks predecessors among the spans Kahn could not order (each
// has one there) until a span repeats.
func (g *Graph) cycleError(indeg []int32) error {
	at := -1
	for i, d := range indeg {
		if d > 0 {
			at = i
			break
		}
	}
	seen := map[int]int{}
	var path []int
	for {
		if k, ok := seen[at]; ok {
			path = path[k:]
			break
		}
		seen[at] = len(path)
		path = append(path, at)
		for _, p := range g.predsOf(at) {
			if indeg[p] > 0 {
				at = int(p)
				break
			}
		}
	}
	slices.Reverse(path)
	first := slices.Index(path, slices.Min(path))
	path = append(path[first:], path[:first]...)
	var b strings.Builder
	for _, i := range append(path, path[0]) {
		if b.Len() > 0 {
			b.WriteString(" -> ")
		}
		fmt.Fprintf(&b, "%d (id %d)", i, g.spans[i].ID)
	}
	return &SpanError{Index: path[0], Field: "deps", Err: fmt.Errorf("%w through spans %s (program order on a stream counts)", ErrCycle, b.String())}
}

func (g *Graph) predsOf(i int) []int32 { return g.preds[g.predOff[i]:g.predOff[i+1]] }
func (g *Graph) succsOf(i int) []int32 { return g.succs[g.succOff[i]:g.succOff[i+1]] }

// Spans returns the graph's spans (not a copy; do not change them).
func (g *Graph) Spans() []Span { return g.spans }

// Kernels returns the distinct kernel names, sorted.
func (g *Graph) Kernels() []string { return slices.Clone(g.kernels) }

// Preds returns span i's predecessors (program order and declared
// dependencies), as indices, sorted.
func (g *Graph) Preds(i int) []int { return toInts(g.predsOf(i)) }

// Lag returns span i's recorded start minus its predecessors' latest end
// (0 for a root; at most 0 for a span that waits for the host, whose start
// its recorded start bounds instead).
func (g *Graph) Lag(i int) int64 { return g.lag[i] }

// EndToEnd returns the recorded end-to-end time in ns.
func (g *Graph) EndToEnd() int64 { return g.base }

func toInts(s []int32) []int {
	out := make([]int, len(s))
	for k, v := range s {
		out[k] = int(v)
	}
	return out
}
