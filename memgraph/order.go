package memgraph

import (
	"math/rand/v2"
	"slices"
)

// orderPasses is how many randomised greedy orders chooseOrder tries
// besides the given one.
const orderPasses = 8

// chooseOrder picks, for a graph whose op order is free, a topological
// order with a low lower bound (peak of live bytes): memory-aware list
// scheduling, which runs next the ready op that adds the fewest live
// bytes (its outputs, less the inputs it is the last to read), ties
// broken at random. It keeps the best of the given order and the greedy
// passes, by LowerBound.
func (c *compiled) chooseOrder(given []int32, rng *rand.Rand) []int32 {
	best := given
	bestLB := LowerBound(c.size, c.intervals(given))
	for range orderPasses {
		o := c.greedyOrder(rng)
		if lb := LowerBound(c.size, c.intervals(o)); lb < bestLB {
			best, bestLB = o, lb
		}
	}
	return best
}

func (c *compiled) greedyOrder(rng *rand.Rand) []int32 {
	succ, indeg := c.edges()
	outs := make([][]int32, c.nops) // tensors an op produces
	ins := make([][]int32, c.nops)  // tensors an op reads
	left := make([]int32, len(c.size))
	for i, p := range c.producer {
		if p >= 0 {
			outs[p] = append(outs[p], int32(i))
		}
		for _, q := range c.consumers[i] {
			ins[q] = append(ins[q], int32(i))
			left[i]++
		}
	}
	started := make([]bool, len(c.size)) // host tensors already brought in
	var ready []int32
	for op := range c.nops {
		if indeg[op] == 0 {
			ready = append(ready, int32(op))
		}
	}
	order := make([]int32, 0, c.nops)
	for len(ready) > 0 {
		bestK, bestScore, ties := 0, int64(0), 0
		for k, op := range ready {
			s := c.score(op, outs[op], ins[op], left, started)
			switch {
			case k == 0 || s < bestScore:
				bestK, bestScore, ties = k, s, 1
			case s == bestScore:
				if ties++; rng.IntN(ties) == 0 {
					bestK = k
				}
			}
		}
		op := ready[bestK]
		ready = slices.Delete(ready, bestK, bestK+1)
		order = append(order, op)
		for _, t := range ins[op] {
			left[t]--
			started[t] = true
		}
		for _, s := range succ[op] {
			if indeg[s]--; indeg[s] == 0 {
				ready = append(ready, s)
			}
		}
	}
	return order
}

// score is the change in live bytes if op ran now.
func (c *compiled) score(op int32, outs, ins []int32, left []int32, started []bool) int64 {
	var s int64
	for _, t := range outs {
		s += c.size[t]
	}
	for _, t := range ins {
		if c.host[t] && !started[t] {
			s += c.size[t]
		}
		if left[t] == int32(countOf(ins, t)) && !c.output[t] {
			s -= c.size[t]
		}
	}
	return s
}

func countOf(a []int32, x int32) int {
	n := 0
	for _, y := range a {
		if y == x {
			n++
		}
	}
	return n
}
