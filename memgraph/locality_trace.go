package memgraph

import (
	"errors"
	"slices"
)

// ErrTraceTooLong means an address trace has more line references (or
// takes more steps to expand) than CacheSpec.MaxRefs allows.
var ErrTraceTooLong = errors.New("memgraph: address trace over the reference limit")

// cursor walks one nest's element accesses in order, a run at a time: a
// run is a stretch of consecutive accesses that touch one cache line
// only. Within the innermost loop a run is found in O(1).
type cursor struct {
	n     nest
	base  int64 // arena offset of the tensor
	lineB int64 // line size
	idx   []int64
	pos   int64 // element index of the next access
	// a straddling element yields one run per line it covers
	strLine, strLast int64
}

func newCursor(n nest, base, lineB int64) *cursor {
	return &cursor{n: n, base: base, lineB: lineB, idx: make([]int64, len(n.loops)), strLine: -1}
}

// chunk returns the next run piece: element indices [first, last] all on
// line; ok is false at the end.
func (c *cursor) chunk() (first, last, line int64, ok bool) {
	if c.strLine >= 0 { // the rest of a straddling element
		line, first = c.strLine, c.pos-1
		if c.strLine++; c.strLine > c.strLast {
			c.strLine = -1
		}
		return first, first, line, true
	}
	if c.pos >= c.n.count {
		return 0, 0, 0, false
	}
	a := c.base + c.n.offset
	for j, l := range c.n.loops {
		a += c.idx[j] * l.stride
	}
	d := len(c.n.loops) - 1
	in := c.n.loops[d]
	left := in.count - c.idx[d]
	line, within := a/c.lineB, a%c.lineB
	m := int64(1)
	if within+c.n.elem <= c.lineB {
		if in.stride == 0 {
			m = left
		} else {
			m = min(left, (c.lineB-c.n.elem-within)/in.stride+1)
		}
	} else if lastLine := (a + c.n.elem - 1) / c.lineB; lastLine > line {
		c.strLine, c.strLast = line+1, lastLine
	}
	first = c.pos
	c.pos += m
	c.idx[d] += m
	for j := d; j > 0 && c.idx[j] == c.n.loops[j].count; j-- {
		c.idx[j] = 0
		c.idx[j-1]++
	}
	return first, c.pos - 1, line, true
}

// stream turns a cursor's runs into at most two line references each,
// at the run's first and last access: the accesses between are hits in
// any cache that holds the lines the op touches meanwhile, and
// referencing both ends keeps the line's recency right.
type stream struct {
	c                 *cursor
	runFirst, runLast int64
	runLine           int64
	have              bool
	// queued references: element index and line
	q    [2][2]int64
	nq   int
	done bool
}

func (s *stream) fill(t *tracer) {
	for s.nq == 0 && !s.done {
		if t.steps++; t.steps > 4*t.maxRefs {
			t.over, s.done = true, true
			return
		}
		first, last, line, ok := s.c.chunk()
		if ok && s.have && line == s.runLine && first <= s.runLast+1 {
			s.runLast = last
			continue
		}
		if s.have {
			s.q[0] = [2]int64{s.runFirst, s.runLine}
			s.nq = 1
			if s.runLast > s.runFirst {
				s.q[1] = [2]int64{s.runLast, s.runLine}
				s.nq = 2
			}
		}
		s.runFirst, s.runLast, s.runLine, s.have = first, last, line, ok
		s.done = !ok
	}
}

// key is when the stream's next reference happens, as a fraction of the
// op: streams of one op advance in lockstep, each at its own rate.
func (s *stream) key() float64 { return float64(s.q[0][0]) / float64(s.c.n.count) }

func (s *stream) pop() int64 {
	line := s.q[0][1]
	s.q[0] = s.q[1]
	s.nq--
	return line
}

// tracer expands the ops' nests, in the plan's op order, into line
// references passed to sink.
type tracer struct {
	g        *Graph
	c        *compiled
	r        *Result
	lineB    int64
	maxRefs  int64
	accesses int64
	refs     int64
	steps    int64 // run pieces expanded, bounded by 4 * maxRefs
	over     bool
}

// opNests is op k's nests: its access list, or each tensor it consumes
// then each it produces, read or written once in sequence.
func (t *tracer) opNests(k int32, ins, outs [][]int32, tensorIdx map[string]int32) ([]nest, error) {
	if len(t.g.Ops[k].Access) > 0 {
		out := make([]nest, len(t.g.Ops[k].Access))
		for a := range out {
			n, err := t.c.expand(t.g, tensorIdx, k, a)
			if err != nil {
				return nil, err
			}
			out[a] = n
		}
		return out, nil
	}
	var out []nest
	for _, list := range [][]int32{ins[k], outs[k]} {
		for _, ti := range list {
			size := t.c.size[ti]
			if size == 0 {
				continue
			}
			e := min(int64(DefaultElem), size)
			out = append(out, nest{tensor: ti, elem: e, loops: []loop{{size / e, e}}, count: size / e})
		}
	}
	return out, nil
}

func (t *tracer) run(sink func(line int64)) error {
	nops := len(t.g.Ops)
	ins, outs := make([][]int32, nops), make([][]int32, nops)
	for i := range t.c.size {
		if p := t.c.producer[i]; p >= 0 {
			outs[p] = append(outs[p], int32(i))
		}
		for k, q := range t.c.consumers[i] {
			if !slices.Contains(t.c.consumers[i][:k], q) {
				ins[q] = append(ins[q], int32(i))
			}
		}
	}
	tensorIdx := make(map[string]int32, len(t.g.Tensors))
	for i := range t.g.Tensors {
		tensorIdx[t.g.Tensors[i].ID] = int32(i)
	}
	prev := int64(-1)
	var streams []*stream
	for _, op := range t.r.Order {
		nests, err := t.opNests(op, ins, outs, tensorIdx)
		if err != nil {
			return err
		}
		streams = streams[:0]
		for _, n := range nests {
			t.accesses += n.count
			s := &stream{c: newCursor(n, t.r.Offsets[n.tensor], t.lineB)}
			s.fill(t)
			streams = append(streams, s)
		}
		for {
			best := -1
			for i, s := range streams {
				if s.nq > 0 && (best < 0 || s.key() < streams[best].key()) {
					best = i
				}
			}
			if best < 0 {
				break
			}
			line := streams[best].pop()
			streams[best].fill(t)
			if line != prev {
				if t.refs++; t.refs > t.maxRefs {
					return ErrTraceTooLong
				}
				sink(line)
				prev = line
			}
		}
		if t.over {
			return ErrTraceTooLong
		}
	}
	return nil
}
