package memgraph

// dirtySet records the lifetimes of tensors whose placement changed in a
// re-placement, and answers whether any of them overlaps a lifetime: a
// tensor none of them overlaps sees the same placed neighbours as before,
// so best fit gives it the same offset (see placer.resume). Two Fenwick
// trees count the changed intervals with First <= t and with Last < t;
// the overlaps of [f, l] are #(First <= l) - #(Last < f).
type dirtySet struct {
	first, last []int32 // Fenwick trees over op positions, 1-based
	n           int32
}

func (d *dirtySet) reset(steps int32) {
	if int32(len(d.first)) != steps+1 {
		d.first, d.last = make([]int32, steps+1), make([]int32, steps+1)
	} else {
		clear(d.first)
		clear(d.last)
	}
	d.n = 0
}

func (d *dirtySet) add(v Interval) {
	d.n++
	for i := v.First + 1; int(i) < len(d.first); i += i & -i {
		d.first[i]++
	}
	for i := v.Last + 1; int(i) < len(d.last); i += i & -i {
		d.last[i]++
	}
}

// count of entries of tree at positions <= t.
func prefix(tree []int32, t int32) int32 {
	var s int32
	for i := min(t+1, int32(len(tree)-1)); i > 0; i -= i & -i {
		s += tree[i]
	}
	return s
}

func (d *dirtySet) overlaps(v Interval) bool {
	if d.n == 0 {
		return false
	}
	return prefix(d.first, v.Last)-prefix(d.last, v.First-1) > 0
}
