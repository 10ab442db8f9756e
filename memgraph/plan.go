package memgraph

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
)

// Options bound and seed the search.
type Options struct {
	// Rand drives the search; nil means no search (the better baseline).
	Rand *rand.Rand
	// Iters is the most placements the search tries. 0 means 4000, fewer
	// on big graphs (40 million tensor placements in all, at least 20):
	// one placement of 100,000 tensors takes about 20 ms of CPU (docs/kernel-authors/memgraph.md).
	Iters int
	// Stop, when set, is polled during the search; returning true ends it
	// with the best plan so far (a deadline, a cancelled request).
	Stop func() bool
}

// Result is a checked plan.
type Result struct {
	Order      []int32    // op positions: Order[k] is the op (index in Graph.Ops) run k-th
	Intervals  []Interval // per tensor, in the order above
	Offsets    []int64    // per tensor, bytes from the arena's base
	Peak       int64      // arena size: the highest tensor end
	LowerBound int64      // the most bytes live at one op (LowerBound)
	BySize     int64      // peak of greedy by size
	ByBreadth  int64      // peak of greedy by breadth
	Strategy   string     // which plan won: "size", "breadth" or "search"
}

// ErrBadPlan means a planner produced a plan that failed Check: a bug in
// memgraph, never returned as a plan.
var ErrBadPlan = errors.New("memgraph: planner produced an invalid plan")

// Plan places every tensor of g. It runs both baselines and, with a
// Rand, the search from the better of them; the answer is never worse
// than either baseline. In a free order it first chooses the op order
// (see chooseOrder). Every plan it returns passed Check.
func Plan(g *Graph, opt Options) (*Result, error) {
	c, err := compile(g)
	if err != nil {
		return nil, err
	}
	order, err := c.topoOrder()
	if err != nil {
		return nil, err
	}
	if !c.free {
		for k := range order {
			order[k] = int32(k)
		}
		return c.planOrder(order, opt)
	}
	r, err := c.planOrder(order, opt)
	if err != nil || opt.Rand == nil {
		return r, err
	}
	if opt.Stop != nil && opt.Stop() {
		return r, nil // out of time: choosing an order means planning again
	}
	chosen := c.chooseOrder(order, opt.Rand)
	if slices.Equal(chosen, order) {
		return r, nil
	}
	r2, err := c.planOrder(chosen, opt)
	if err != nil || r2.Peak >= r.Peak {
		return r, err
	}
	return r2, nil
}

// planOrder plans the offsets for one op order.
func (c *compiled) planOrder(order []int32, opt Options) (*Result, error) {
	iv := c.intervals(order)
	p := newProblem(c.size, c.align, iv)
	r := &Result{Order: order, Intervals: iv, LowerBound: LowerBound(c.size, iv)}
	pl := newPlacer(p)
	sizeOrd := sizeOrder(p)
	off, peak := pl.run(sizeOrd)
	if err := checkPlan(p, off, peak, "greedy by size"); err != nil {
		return nil, err
	}
	r.BySize, r.Offsets, r.Peak, r.Strategy = peak, append([]int64(nil), off...), peak, "size"
	start := sizeOrd
	breadthOrd := breadthOrder(p)
	off, peak = pl.run(breadthOrd)
	if err := checkPlan(p, off, peak, "greedy by breadth"); err != nil {
		return nil, err
	}
	r.ByBreadth = peak
	if peak < r.Peak {
		r.Offsets, r.Peak, r.Strategy = append(r.Offsets[:0], off...), peak, "breadth"
		start = breadthOrd
	}
	if opt.Rand == nil {
		return r, nil
	}
	iters := opt.Iters
	if iters == 0 {
		iters = max(20, min(4000, 40_000_000/max(1, len(c.size))))
	}
	best, bestPeak := improve(p, pl, start, r.Peak, r.LowerBound, opt.Rand, iters, opt.Stop)
	if bestPeak < r.Peak {
		off, peak = pl.run(best)
		if err := checkPlan(p, off, peak, "search"); err != nil {
			return nil, err
		}
		r.Offsets, r.Peak, r.Strategy = append(r.Offsets[:0], off...), peak, "search"
	}
	return r, nil
}

func checkPlan(p *problem, off []int64, peak int64, who string) error {
	if err := Check(p.size, p.align, p.iv, off, peak); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadPlan, who, err)
	}
	return nil
}
