package memgraph

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// LayoutOptions bound the layout search.
type LayoutOptions struct {
	// Rand, when set, adds Iters random moves of the best placement
	// order so far (one tensor placed earlier); nil tries only the fixed
	// candidates.
	Rand  *rand.Rand
	Iters int
	// Stop, when set, is polled between estimates.
	Stop func() bool
}

// LayoutReport says what Layout changed.
type LayoutReport struct {
	MissesBefore []int64 `json:"misses_before"` // per cache level, the plan given
	MissesAfter  []int64 `json:"misses_after"`  // per cache level, the plan returned
	PeakBefore   int64   `json:"peak_before"`
	PeakAfter    int64   `json:"peak_after"`
	Moved        int     `json:"moved"`    // tensors whose offset changed
	Tried        int     `json:"tried"`    // plans estimated
	Strategy     string  `json:"strategy"` // the winning candidate
}

// warmFitLimit bounds the tensors of the warm-fit candidate, which is
// quadratic in them.
const warmFitLimit = 5000

// Layout re-places r's tensors (same op order, same lifetimes) to lower
// the estimated misses of cache, never raising the peak: it estimates
// the plan given and, among other placements whose peak is no higher,
// picks the one of least cost, where a miss costs 1 at the first level,
// 10 at the second, 100 at the third and 1000 at the fourth. The
// candidates are best-fit placements in other orders (greedy by size,
// by breadth, by first use) and warm fit: tensors in the order they are
// first used, each put where the tensor that died most recently lay
// (whose lines are likeliest still cached) when it fits there, else at
// the best fit. With a Rand it then tries random moves of the winning
// order. Every plan it returns passed Check.
func Layout(g *Graph, r *Result, cache CacheSpec, opt LayoutOptions) (*Result, *LayoutReport, error) {
	c, err := compile(g)
	if err != nil {
		return nil, nil, err
	}
	if err := cache.check(); err != nil {
		return nil, nil, err
	}
	if err := planFits(c, r); err != nil {
		return nil, nil, err
	}
	iv := c.intervals(r.Order)
	p := newProblem(c.size, c.align, iv)
	if err := checkPlan(p, r.Offsets, r.Peak, "layout input"); err != nil {
		return nil, nil, err
	}
	cost := func(e *MissEstimate) int64 {
		var s, w int64 = 0, 1
		for _, l := range e.Levels {
			s += w * l.Misses
			w *= 10
		}
		return s
	}
	misses := func(e *MissEstimate) []int64 {
		out := make([]int64, len(e.Levels))
		for i, l := range e.Levels {
			out[i] = l.Misses
		}
		return out
	}
	base, err := estimate(g, c, r, cache)
	if err != nil {
		return nil, nil, err
	}
	rep := &LayoutReport{MissesBefore: misses(base), PeakBefore: r.Peak, Tried: 1, Strategy: "given"}
	best, bestCost, bestEst := slices.Clone(r.Offsets), cost(base), base
	var bestOrder []int32
	try := func(name string, order []int32, off []int64, peak int64) error {
		if peak > r.Peak || (opt.Stop != nil && opt.Stop()) {
			return nil
		}
		if err := checkPlan(p, off, peak, "layout "+name); err != nil {
			return err
		}
		cand := *r
		cand.Offsets = off
		e, err := estimate(g, c, &cand, cache)
		if err != nil {
			return err
		}
		rep.Tried++
		if k := cost(e); k < bestCost {
			best, bestCost, bestEst, rep.Strategy = slices.Clone(off), k, e, name
			bestOrder = order
		}
		return nil
	}
	pl := newPlacer(p)
	for _, cand := range []struct {
		name  string
		order []int32
	}{{"size", sizeOrder(p)}, {"breadth", breadthOrder(p)}, {"first use", firstUseOrder(p)}} {
		off, peak := pl.run(cand.order)
		if err := try(cand.name, cand.order, off, peak); err != nil {
			return nil, nil, err
		}
	}
	if len(c.size) <= warmFitLimit {
		for _, cand := range []struct {
			name  string
			order []int32
		}{{"warm fit by first use", firstUseOrder(p)}, {"warm fit by size", sizeOrder(p)}, {"warm fit by breadth", breadthOrder(p)}} {
			off, peak := warmFit(p, cand.order, r.Peak)
			if err := try(cand.name, nil, off, peak); err != nil {
				return nil, nil, err
			}
		}
	}
	if opt.Rand != nil && len(c.size) > 1 {
		order := bestOrder
		if order == nil {
			order = firstUseOrder(p)
		}
		for range opt.Iters {
			if opt.Stop != nil && opt.Stop() {
				break
			}
			next := slices.Clone(order)
			i := opt.Rand.IntN(len(next)-1) + 1
			j := opt.Rand.IntN(i)
			x := next[i]
			copy(next[j+1:i+1], next[j:i])
			next[j] = x
			before := bestCost
			off, peak := pl.run(next)
			if err := try("search", next, off, peak); err != nil {
				return nil, nil, err
			}
			if bestCost < before {
				order = next
			}
		}
	}
	out := *r
	out.Intervals = iv
	out.Offsets = best
	out.Peak = 0
	for i, o := range best {
		out.Peak = max(out.Peak, o+c.size[i])
		if o != r.Offsets[i] {
			rep.Moved++
		}
	}
	rep.MissesAfter, rep.PeakAfter = misses(bestEst), out.Peak
	return &out, rep, nil
}

// firstUseOrder places tensors in the order their lives start, larger
// first among those starting together.
func firstUseOrder(p *problem) []int32 {
	order := make([]int32, len(p.size))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		if c := cmp.Compare(p.iv[a].First, p.iv[b].First); c != 0 {
			return c
		}
		return cmp.Compare(p.size[b], p.size[a])
	})
	return order
}

// warmFit places tensors in order, each at the offset of the placed
// tensor that died most recently before it starts, when it fits there
// (aligned, under limit, clear of every placed tensor alive with it);
// else at the best fit among those, as the placer would.
func warmFit(p *problem, order []int32, limit int64) ([]int64, int64) {
	off := make([]int64, len(p.size))
	var placed []int32
	var peak int64
	var live []int32
	for _, x := range order {
		v := p.iv[x]
		live = live[:0]
		var dead []int32
		for _, y := range placed {
			if p.size[y] == 0 {
				continue
			}
			if p.iv[y].overlaps(v) {
				live = append(live, y)
			} else if p.iv[y].Last < v.First {
				dead = append(dead, y)
			}
		}
		fits := func(o int64) bool {
			if o%p.align[x] != 0 || o+p.size[x] > limit {
				return false
			}
			for _, y := range live {
				if o < off[y]+p.size[y] && off[y] < o+p.size[x] {
					return false
				}
			}
			return true
		}
		slices.SortStableFunc(dead, func(a, b int32) int { return cmp.Compare(p.iv[b].Last, p.iv[a].Last) })
		o := int64(-1)
		for _, y := range dead[:min(len(dead), 8)] {
			if fits(off[y]) {
				o = off[y]
				break
			}
		}
		if o < 0 {
			slices.SortFunc(live, func(a, b int32) int { return cmp.Compare(off[a], off[b]) })
			o = gapFit(p, x, live, off)
		}
		off[x] = o
		peak = max(peak, o+p.size[x])
		placed = append(placed, x)
	}
	return off, peak
}
