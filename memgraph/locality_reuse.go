package memgraph

// reuse computes Mattson's LRU stack distance of each reference in a
// stream of cache lines: the number of distinct other lines referenced
// since the line's previous reference (0 for a line referenced twice in
// a row, -1 for a first reference). A fully associative LRU cache of C
// lines hits exactly the references whose distance is below C.
//
// It marks, in a Fenwick tree over reference times, the time of each
// line's latest reference; the distance of a reference to a line last
// seen at time p is the number of marks after p. That is O(log T) per
// reference. To keep memory bounded by the distinct lines rather than
// the references, the times are renumbered (compacted) when the tree is
// full, keeping only the marks, so T stays within a small multiple of
// the distinct lines and the cost amortised O(log T).
type reuse struct {
	tree   []int32 // Fenwick tree over times 1..len(tree)-1
	owner  []int64 // line referenced at each time (only marks matter)
	now    int32   // last time used
	marks  int32   // distinct lines seen
	dense  []int32 // line -> latest time, 0 for never (when lines are few)
	sparse map[int64]int32
}

func newReuse(lines int64) *reuse {
	r := &reuse{}
	if lines <= 1<<24 {
		r.dense = make([]int32, lines)
	} else {
		r.sparse = map[int64]int32{}
	}
	r.grow(int(min(max(1<<12, 2*lines+2), 1<<20)))
	return r
}

func (r *reuse) last(line int64) int32 {
	if r.dense != nil {
		return r.dense[line]
	}
	return r.sparse[line]
}

func (r *reuse) setLast(line int64, t int32) {
	if r.dense != nil {
		r.dense[line] = t
	} else {
		r.sparse[line] = t
	}
}

// ref references line and returns its stack distance, -1 when it is the
// line's first reference.
func (r *reuse) ref(line int64) int64 {
	if int(r.now)+1 >= len(r.tree) {
		r.compact()
	}
	p := r.last(line)
	dist := int64(-1)
	if p > 0 {
		dist = int64(r.marks - r.prefix(p))
		r.add(p, -1)
	} else {
		r.marks++
	}
	r.now++
	r.add(r.now, 1)
	r.owner[r.now] = line
	r.setLast(line, r.now)
	return dist
}

func (r *reuse) add(t int32, d int32) {
	for i := t; int(i) < len(r.tree); i += i & -i {
		r.tree[i] += d
	}
}

func (r *reuse) prefix(t int32) int32 {
	var s int32
	for i := t; i > 0; i -= i & -i {
		s += r.tree[i]
	}
	return s
}

// compact renumbers the marked times 1..marks, in order, in place, and
// makes room for at least three times as many new references as there
// are marks. Each line has one marked time, so a renumbered line is
// never met again in the sweep.
func (r *reuse) compact() {
	w := int32(0)
	for t := int32(1); t <= r.now; t++ {
		if line := r.owner[t]; r.last(line) == t {
			w++
			r.owner[w] = line
			r.setLast(line, w)
		}
	}
	r.now = w
	r.grow(max(1<<12, 4*int(w)+2))
	// Linear Fenwick build over the marks at 1..now.
	for i := int32(1); int(i) < len(r.tree); i++ {
		if i <= r.now {
			r.tree[i]++
		}
		if j := i + i&-i; int(j) < len(r.tree) {
			r.tree[j] += r.tree[i]
		}
	}
}

// grow makes the tree at least n long and clears it, keeping owner's
// first now+1 entries.
func (r *reuse) grow(n int) {
	if n > len(r.tree) {
		owner := make([]int64, n)
		copy(owner, r.owner[:min(len(r.owner), int(r.now)+1)])
		r.tree, r.owner = make([]int32, n), owner
	} else {
		clear(r.tree)
	}
}
