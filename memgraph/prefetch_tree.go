package memgraph

import "math"

// maxTree holds int64 values at positions 0..n-1 with range add, range
// max and "last position above x" in O(log n), so that the prefetch
// scheduler's memory bookkeeping costs O(log n) per copy whatever the
// lengths of the copies' lives: a graph's host tensors may each live
// across every op.
type maxTree struct {
	n   int
	mx  []int64 // max of the subtree, including the node's own add
	add []int64 // added to the whole subtree
}

func newMaxTree(vals []int64) *maxTree {
	t := &maxTree{n: len(vals), mx: make([]int64, 4*max(1, len(vals))), add: make([]int64, 4*max(1, len(vals)))}
	if t.n > 0 {
		t.build(1, 0, t.n-1, vals)
	}
	return t
}

func (t *maxTree) build(node, lo, hi int, vals []int64) {
	if lo == hi {
		t.mx[node] = vals[lo]
		return
	}
	mid := (lo + hi) / 2
	t.build(2*node, lo, mid, vals)
	t.build(2*node+1, mid+1, hi, vals)
	t.mx[node] = max(t.mx[2*node], t.mx[2*node+1])
}

// rangeAdd adds v at positions l..r (inclusive; empty when l > r).
func (t *maxTree) rangeAdd(l, r int, v int64) {
	if l <= r {
		t.addAt(1, 0, t.n-1, l, r, v)
	}
}

func (t *maxTree) addAt(node, lo, hi, l, r int, v int64) {
	if r < lo || hi < l {
		return
	}
	if l <= lo && hi <= r {
		t.mx[node] += v
		t.add[node] += v
		return
	}
	mid := (lo + hi) / 2
	t.addAt(2*node, lo, mid, l, r, v)
	t.addAt(2*node+1, mid+1, hi, l, r, v)
	t.mx[node] = max(t.mx[2*node], t.mx[2*node+1]) + t.add[node]
}

// rangeMax is the largest value at positions l..r (math.MinInt64 when
// l > r).
func (t *maxTree) rangeMax(l, r int) int64 {
	if l > r {
		return math.MinInt64
	}
	return t.maxAt(1, 0, t.n-1, l, r)
}

func (t *maxTree) maxAt(node, lo, hi, l, r int) int64 {
	if r < lo || hi < l {
		return math.MinInt64
	}
	if l <= lo && hi <= r {
		return t.mx[node]
	}
	mid := (lo + hi) / 2
	return max(t.maxAt(2*node, lo, mid, l, r), t.maxAt(2*node+1, mid+1, hi, l, r)) + t.add[node]
}

// lastAbove is the last position in l..r whose value is above x, or -1.
func (t *maxTree) lastAbove(l, r int, x int64) int {
	if l > r {
		return -1
	}
	return t.lastAt(1, 0, t.n-1, l, r, x)
}

func (t *maxTree) lastAt(node, lo, hi, l, r int, x int64) int {
	if r < lo || hi < l || t.mx[node] <= x {
		return -1
	}
	if lo == hi {
		return lo
	}
	mid := (lo + hi) / 2
	x -= t.add[node]
	if p := t.lastAt(2*node+1, mid+1, hi, l, r, x); p >= 0 {
		return p
	}
	return t.lastAt(2*node, lo, mid, l, r, x)
}
