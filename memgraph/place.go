package memgraph

import (
	"cmp"
	"slices"
)

// problem is what the offset planners see: sizes, alignments and
// lifetimes, tensors as indices.
type problem struct {
	size  []int64
	align []int64
	iv    []Interval
	steps int32
}

func newProblem(size, align []int64, iv []Interval) *problem {
	p := &problem{size: size, align: align, iv: iv}
	for _, v := range iv {
		p.steps = max(p.steps, v.Last+1)
	}
	return p
}

// placer places tensors one by one, each at the best-fit offset among the
// tensors already placed whose lifetimes overlap its own: the smallest gap
// that holds it, else just above the highest of them. This is the
// placement of Pisarchyk & Lee's offset strategies and of TensorFlow
// Lite's arena (simple_memory_arena); the strategies differ only in the
// order they place tensors.
type placer struct {
	p        *problem
	off      []int64
	placedAt [][]int32 // per op position, placed tensors live there
	startsAt [][]int32 // per op position, placed tensors whose life starts there
	cand     []int32
	dirty    dirtySet
}

func newPlacer(p *problem) *placer {
	return &placer{
		p:        p,
		off:      make([]int64, len(p.size)),
		placedAt: make([][]int32, p.steps),
		startsAt: make([][]int32, p.steps),
	}
}

// run places every tensor in order and returns the offsets (owned by the
// placer until the next run) and the peak.
func (pl *placer) run(order []int32) ([]int64, int64) {
	off, peak, _ := pl.resume(order, nil, 0, -1, -1)
	return off, peak
}

// resume places order[from:] after restoring order[:from] at the offsets
// base holds for them (a plan of an order with the same prefix). When
// order is base's order with the single tensor moved placed earlier, a
// later tensor whose lifetime overlaps no tensor that moved or changed
// offset keeps its base offset without a search: best fit would see the
// same neighbours. With limit >= 0 it gives up, returning false, as soon
// as the peak passes limit: peaks only grow as tensors are placed.
func (pl *placer) resume(order []int32, base []int64, from int, limit int64, moved int32) ([]int64, int64, bool) {
	for t := range pl.placedAt {
		pl.placedAt[t] = pl.placedAt[t][:0]
		pl.startsAt[t] = pl.startsAt[t][:0]
	}
	track := moved >= 0
	if track {
		pl.dirty.reset(pl.p.steps)
		pl.dirty.add(pl.p.iv[moved])
	}
	var peak int64
	for k, x := range order {
		var o int64
		switch {
		case k < from:
			o = base[x]
		case track && !pl.dirty.overlaps(pl.p.iv[x]):
			o = base[x]
		default:
			o = pl.bestFit(x)
			if track && o != base[x] {
				pl.dirty.add(pl.p.iv[x])
			}
		}
		pl.off[x] = o
		if peak = max(peak, o+pl.p.size[x]); limit >= 0 && peak > limit {
			return pl.off, peak, false
		}
		if pl.p.size[x] == 0 {
			continue // holds no bytes, so it conflicts with nothing
		}
		v := pl.p.iv[x]
		for t := v.First; t <= v.Last; t++ {
			pl.placedAt[t] = append(pl.placedAt[t], x)
		}
		pl.startsAt[v.First] = append(pl.startsAt[v.First], x)
	}
	return pl.off, peak, true
}

func (pl *placer) bestFit(x int32) int64 {
	p := pl.p
	v := p.iv[x]
	// A placed tensor overlaps [First, Last] when it is alive at First or
	// starts after First, by Last: each is listed once, no duplicates.
	pl.cand = append(pl.cand[:0], pl.placedAt[v.First]...)
	for t := v.First + 1; t <= v.Last; t++ {
		pl.cand = append(pl.cand, pl.startsAt[t]...)
	}
	slices.SortFunc(pl.cand, func(a, b int32) int { return cmp.Compare(pl.off[a], pl.off[b]) })
	return gapFit(p, x, pl.cand, pl.off)
}

// gapFit is the best-fit offset for x among placed tensors sorted by
// offset: the smallest aligned gap that holds it, else above them all.
func gapFit(p *problem, x int32, byOff []int32, off []int64) int64 {
	size, align := p.size[x], p.align[x]
	best, bestGap := int64(-1), int64(-1)
	var top int64 // highest end of the tensors seen so far
	for _, y := range byOff {
		start := alignUp(top, align)
		if gap := off[y] - start; gap >= size && (bestGap < 0 || gap < bestGap) {
			best, bestGap = start, gap
		}
		top = max(top, off[y]+p.size[y])
	}
	if best < 0 {
		best = alignUp(top, align)
	}
	return best
}

func alignUp(x, a int64) int64 { return (x + a - 1) &^ (a - 1) }

// sizeOrder is greedy by size: largest first, ties by first use, as
// TensorFlow Lite's arena planner and Pisarchyk & Lee's "greedy by size
// for offset calculation" order them.
func sizeOrder(p *problem) []int32 {
	order := make([]int32, len(p.size))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		if c := cmp.Compare(p.size[b], p.size[a]); c != 0 {
			return c
		}
		return cmp.Compare(p.iv[a].First, p.iv[b].First)
	})
	return order
}

// breadthOrder is Pisarchyk & Lee's greedy by breadth: ops in decreasing
// breadth (bytes live during the op), and within an op its live tensors
// largest first, each tensor at its first appearance.
func breadthOrder(p *problem) []int32 {
	live := make([][]int32, p.steps)
	breadth := make([]int64, p.steps)
	for i, v := range p.iv {
		for t := v.First; t <= v.Last; t++ {
			live[t] = append(live[t], int32(i))
			breadth[t] += p.size[i]
		}
	}
	steps := make([]int32, p.steps)
	for t := range steps {
		steps[t] = int32(t)
	}
	slices.SortStableFunc(steps, func(a, b int32) int { return cmp.Compare(breadth[b], breadth[a]) })
	done := make([]bool, len(p.size))
	order := make([]int32, 0, len(p.size))
	for _, t := range steps {
		slices.SortStableFunc(live[t], func(a, b int32) int { return cmp.Compare(p.size[b], p.size[a]) })
		for _, x := range live[t] {
			if !done[x] {
				done[x] = true
				order = append(order, x)
			}
		}
	}
	return order
}
