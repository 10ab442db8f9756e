package memgraph

// Interval is a tensor's lifetime: the positions, in op order, of the
// first and last ops during which it must hold its bytes (inclusive). Two
// tensors may share memory only when their intervals are disjoint.
type Interval struct{ First, Last int32 }

func (a Interval) overlaps(b Interval) bool { return a.First <= b.Last && b.First <= a.Last }

// topoOrder returns an op order that respects every producer → consumer
// edge, preferring the given order (Kahn's algorithm, lowest index first),
// or an error naming an op on a cycle.
func (c *compiled) topoOrder() ([]int32, error) {
	succ, indeg := c.edges()
	order := make([]int32, 0, c.nops)
	heap := &minHeap{}
	for op := range c.nops {
		if indeg[op] == 0 {
			heap.push(int32(op))
		}
	}
	for heap.len() > 0 {
		op := heap.pop()
		order = append(order, op)
		for _, s := range succ[op] {
			if indeg[s]--; indeg[s] == 0 {
				heap.push(s)
			}
		}
	}
	if len(order) < c.nops {
		for op := range c.nops {
			if indeg[op] > 0 {
				return nil, invalid("op %q is on a cycle of producer/consumer edges", c.opID[op])
			}
		}
	}
	return order, nil
}

// edges gives each op's successors (ops consuming its outputs) and
// in-degrees; duplicate edges count once per tensor, consistently.
func (c *compiled) edges() ([][]int32, []int32) {
	succ := make([][]int32, c.nops)
	indeg := make([]int32, c.nops)
	for i, p := range c.producer {
		if p < 0 {
			continue
		}
		for _, q := range c.consumers[i] {
			succ[p] = append(succ[p], q)
			indeg[q]++
		}
	}
	return succ, indeg
}

// intervals computes every tensor's lifetime when the ops run in order
// (order[k] is the op at position k). A graph input lives from the start,
// a host tensor from its first consumer (the transfer lands just before),
// a graph output to the end.
func (c *compiled) intervals(order []int32) []Interval {
	pos := make([]int32, c.nops)
	for k, op := range order {
		pos[op] = int32(k)
	}
	end := int32(max(c.nops, 1) - 1)
	iv := make([]Interval, len(c.size))
	for i := range iv {
		if c.first[i] >= 0 {
			iv[i] = Interval{c.first[i], c.last[i]}
			continue
		}
		first, last := int32(0), int32(-1)
		if c.producer[i] >= 0 {
			first = pos[c.producer[i]]
		} else if c.host[i] {
			first = end
			for _, q := range c.consumers[i] {
				first = min(first, pos[q])
			}
		}
		for _, q := range c.consumers[i] {
			last = max(last, pos[q])
		}
		if c.output[i] {
			last = end
		}
		iv[i] = Interval{first, max(first, last)}
	}
	return iv
}

// LowerBound is the most bytes live at any one op: no plan of these
// intervals can use less memory, whatever its offsets.
func LowerBound(size []int64, iv []Interval) int64 {
	steps := int32(0)
	for _, v := range iv {
		steps = max(steps, v.Last+1)
	}
	delta := make([]int64, steps+1)
	for i, v := range iv {
		delta[v.First] += size[i]
		delta[v.Last+1] -= size[i]
	}
	var live, peak int64
	for _, d := range delta {
		live += d
		peak = max(peak, live)
	}
	return peak
}

// minHeap is a small binary heap of op indices.
type minHeap struct{ a []int32 }

func (h *minHeap) len() int { return len(h.a) }

func (h *minHeap) push(x int32) {
	h.a = append(h.a, x)
	for i := len(h.a) - 1; i > 0; {
		p := (i - 1) / 2
		if h.a[p] <= h.a[i] {
			break
		}
		h.a[p], h.a[i] = h.a[i], h.a[p]
		i = p
	}
}

func (h *minHeap) pop() int32 {
	top := h.a[0]
	n := len(h.a) - 1
	h.a[0] = h.a[n]
	h.a = h.a[:n]
	for i := 0; ; {
		l, s := 2*i+1, i
		if l < n && h.a[l] < h.a[s] {
			s = l
		}
		if l+1 < n && h.a[l+1] < h.a[s] {
			s = l + 1
		}
		if s == i {
			break
		}
		h.a[i], h.a[s] = h.a[s], h.a[i]
		i = s
	}
	return top
}
