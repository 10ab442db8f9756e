package memgraph

import (
	"fmt"
	"math/bits"
)

// Access is how one op walks one of its tensors: an affine loop nest
// over byte offsets within the tensor. The patterns are shorthands for
// common nests (elem is the element size in bytes, n = bytes/elem):
//
//	sequential: offset, offset+elem, ..., whole tensor, passes times
//	strided:    a column walk of a row-major matrix with row pitch
//	            stride bytes: every row's element 0, then every row's
//	            element 1, ... (a transpose's read side), passes times
//	tiled:      a row-major matrix with row pitch row bytes, walked in
//	            tiles of tile[0] rows by tile[1] elements, tiles in
//	            row-major order, each tile row-major, passes times
//	loops:      an explicit nest, [count, stride] pairs outermost first:
//	            address = offset + sum of index_i * stride_i
//
// A loop of stride 0 repeats what it encloses, so a nest can say that a
// tensor is read once per iteration of an outer loop it does not index
// (a matrix multiply's A row against every column block of B).
type Access struct {
	Tensor  string    `json:"tensor"`
	Pattern string    `json:"pattern"`
	Elem    int64     `json:"elem,omitempty"`   // bytes per element; default 4
	Offset  int64     `json:"offset,omitempty"` // first byte within the tensor
	Passes  int64     `json:"passes,omitempty"` // default 1; not for loops
	Stride  int64     `json:"stride,omitempty"` // strided: row pitch in bytes
	Row     int64     `json:"row,omitempty"`    // tiled: row pitch in bytes
	Tile    []int64   `json:"tile,omitempty"`   // tiled: [rows, elements]
	Loops   [][]int64 `json:"loops,omitempty"`  // loops: [count, stride] pairs
}

// Bounds on access descriptions.
const (
	MaxLoops        = 8
	MaxAccessCount  = 1 << 40 // element accesses of one Access
	MaxElem         = 1 << 12
	MaxOpDurationNS = 3600 * 1e9 // one hour
	DefaultElem     = 4
)

// loop is one level of an access nest.
type loop struct{ count, stride int64 }

// nest is an Access made concrete: tensor index, element size, base
// offset and loops outermost first.
type nest struct {
	tensor int32
	elem   int64
	offset int64
	loops  []loop
	count  int64 // element accesses: the product of the counts
}

// checkOpExtras checks every op's duration and access list: each access
// names a tensor the op produces or consumes (or, for an explicit
// lifetime, one alive at the op's position) and stays within its bytes.
func (c *compiled) checkOpExtras(g *Graph) error {
	var tensorIdx map[string]int32
	for k := range g.Ops {
		op := &g.Ops[k]
		if op.Duration < 0 || op.Duration > MaxOpDurationNS {
			return invalid("op %q: duration_ns %d outside [0, %d]", op.ID, op.Duration, int64(MaxOpDurationNS))
		}
		if len(op.Access) == 0 {
			continue
		}
		if tensorIdx == nil {
			tensorIdx = make(map[string]int32, len(g.Tensors))
			for i := range g.Tensors {
				tensorIdx[g.Tensors[i].ID] = int32(i)
			}
		}
		for a := range op.Access {
			if _, err := c.expand(g, tensorIdx, int32(k), a); err != nil {
				return err
			}
		}
	}
	return nil
}

// expand checks op k's access a and returns its nest.
func (c *compiled) expand(g *Graph, tensorIdx map[string]int32, k int32, a int) (nest, error) {
	ac := &g.Ops[k].Access[a]
	where := func(format string, args ...any) error {
		return invalid("op %q: access[%d] (tensor %q): %s", g.Ops[k].ID, a, ac.Tensor, fmt.Sprintf(format, args...))
	}
	ti, ok := tensorIdx[ac.Tensor]
	if !ok {
		return nest{}, where("not a tensor")
	}
	if !c.touches(ti, k) {
		return nest{}, where("the op neither produces nor consumes it")
	}
	bytes := c.size[ti]
	n := nest{tensor: ti, elem: ac.Elem, offset: ac.Offset}
	if n.elem == 0 {
		n.elem = DefaultElem
	}
	if n.elem < 1 || n.elem > MaxElem {
		return nest{}, where("elem %d outside [1, %d]", ac.Elem, MaxElem)
	}
	if n.offset < 0 || n.offset > bytes {
		return nest{}, where("offset %d outside [0, %d]", ac.Offset, bytes)
	}
	passes := ac.Passes
	if passes == 0 {
		passes = 1
	}
	if passes < 0 || passes > MaxAccessCount {
		return nest{}, where("passes %d outside [1, %d]", ac.Passes, int64(MaxAccessCount))
	}
	if ac.Pattern != "loops" && ac.Loops != nil {
		return nest{}, where("loops belong to pattern \"loops\"")
	}
	if ac.Pattern != "strided" && ac.Stride != 0 {
		return nest{}, where("stride belongs to pattern \"strided\"")
	}
	if ac.Pattern != "tiled" && (ac.Row != 0 || ac.Tile != nil) {
		return nest{}, where("row and tile belong to pattern \"tiled\"")
	}
	span := bytes - n.offset // bytes the pattern may walk
	switch ac.Pattern {
	case "sequential":
		n.loops = []loop{{passes, 0}, {span / n.elem, n.elem}}
	case "strided":
		if ac.Stride < n.elem || ac.Stride%n.elem != 0 {
			return nest{}, where("stride %d: want a positive multiple of elem %d", ac.Stride, n.elem)
		}
		if ac.Stride > span {
			return nest{}, where("stride %d over the %d bytes from offset", ac.Stride, span)
		}
		n.loops = []loop{{passes, 0}, {ac.Stride / n.elem, n.elem}, {span / ac.Stride, ac.Stride}}
	case "tiled":
		if ac.Row < n.elem || ac.Row%n.elem != 0 || ac.Row > span {
			return nest{}, where("row %d: want a multiple of elem %d, at most %d", ac.Row, n.elem, span)
		}
		if len(ac.Tile) != 2 || ac.Tile[0] < 1 || ac.Tile[1] < 1 {
			return nest{}, where("tile %v: want [rows, elements], both positive", ac.Tile)
		}
		rows, cols := span/ac.Row, ac.Row/n.elem
		th, tw := ac.Tile[0], ac.Tile[1]
		if rows%th != 0 || cols%tw != 0 {
			return nest{}, where("tile %v does not divide the %d x %d matrix", ac.Tile, rows, cols)
		}
		n.loops = []loop{{passes, 0}, {rows / th, th * ac.Row}, {cols / tw, tw * n.elem}, {th, ac.Row}, {tw, n.elem}}
	case "loops":
		if ac.Passes != 0 {
			return nest{}, where("passes: add an outer loop of stride 0 instead")
		}
		if len(ac.Loops) == 0 || len(ac.Loops) > MaxLoops {
			return nest{}, where("%d loops: want 1 to %d", len(ac.Loops), MaxLoops)
		}
		for i, l := range ac.Loops {
			if len(l) != 2 || l[0] < 1 || l[1] < 0 || l[1] > bytes {
				return nest{}, where("loops[%d] = %v: want [count >= 1, stride in [0, %d]]", i, l, bytes)
			}
			n.loops = append(n.loops, loop{l[0], l[1]})
		}
	default:
		return nest{}, where("pattern %q: want sequential, strided, tiled or loops", ac.Pattern)
	}
	// The count must be bounded and the last element inside the tensor.
	n.count = 1
	reach := n.offset + n.elem
	if reach > bytes {
		return nest{}, where("no whole element of %d bytes fits from offset %d in %d bytes", n.elem, n.offset, bytes)
	}
	for _, l := range n.loops {
		if l.count < 1 {
			return nest{}, where("walks no element (a loop of count %d)", l.count)
		}
		hi, lo := bits.Mul64(uint64(n.count), uint64(l.count))
		if hi != 0 || lo > MaxAccessCount {
			return nest{}, where("over %d element accesses", int64(MaxAccessCount))
		}
		n.count = int64(lo)
		hi, lo = bits.Mul64(uint64(l.count-1), uint64(l.stride))
		if hi != 0 || lo > uint64(bytes) {
			return nest{}, where("reaches past the tensor's %d bytes", bytes)
		}
		if reach += int64(lo); reach > bytes {
			return nest{}, where("reaches byte %d, past the tensor's %d bytes", reach, bytes)
		}
	}
	return n, nil
}

// touches says whether op k is tensor ti's producer or a consumer, or,
// for an explicit lifetime, runs within it.
func (c *compiled) touches(ti, k int32) bool {
	if c.first[ti] >= 0 {
		return c.first[ti] <= k && k <= c.last[ti]
	}
	if c.producer[ti] == k {
		return true
	}
	for _, q := range c.consumers[ti] {
		if q == k {
			return true
		}
	}
	return false
}
