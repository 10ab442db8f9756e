package memgraph

import (
	"math"
	"math/rand/v2"
	"slices"
)

// improve searches over the order in which the placer places tensors,
// starting from start, by simulated annealing on the peak. A move takes
// one tensor and places it earlier: half the time a tensor that reaches
// the current peak (lifting it out of the way is what can lower the
// peak), a quarter of the time a tensor alive with one of those, otherwise
// any tensor. It stops after iters placements or when
// the peak meets bound; it returns the best order and its peak.
func improve(p *problem, pl *placer, start []int32, startPeak, bound int64, rng *rand.Rand, iters int, stop func() bool) ([]int32, int64) {
	n := len(start)
	best, bestPeak := slices.Clone(start), startPeak
	if n < 2 || bestPeak <= bound {
		return best, bestPeak
	}
	cur, curPeak := slices.Clone(start), startPeak
	next := make([]int32, n)
	pos := make([]int32, n) // tensor → position in cur
	var tops []int32
	live := liveAt(p)
	// Start hot enough to accept a move that costs 1% of the peak half the
	// time, and cool linearly to greedy descent.
	t0 := 0.01 * float64(startPeak) / math.Ln2
	o, _ := pl.run(cur)
	curOff := slices.Clone(o)
	for it := 0; it < iters; it++ {
		// Poll every 64 placements, or every one on big graphs, where
		// one placement takes milliseconds (about 20 ms at 100,000
		// tensors): a deadline is met within one placement.
		if stop != nil && (it%64 == 0 || n >= pollEvery) && stop() {
			break
		}
		for k, x := range cur {
			pos[x] = int32(k)
		}
		tops = tops[:0]
		for x := range n {
			if curOff[x]+p.size[x] == curPeak {
				tops = append(tops, int32(x))
			}
		}
		var j int
		switch r := rng.IntN(4); {
		case len(tops) > 0 && r < 2:
			j = int(pos[tops[rng.IntN(len(tops))]])
		case len(tops) > 0 && r == 2:
			j = int(pos[near(live, p.iv[tops[rng.IntN(len(tops))]], rng)])
		default:
			j = rng.IntN(n)
		}
		if j == 0 {
			continue
		}
		i := rng.IntN(j)
		copy(next, cur)
		x := next[j]
		copy(next[i+1:j+1], cur[i:j])
		next[i] = x
		// Draw the acceptance test first: the move is taken when its peak
		// is at most limit, so placing can stop once the peak passes it.
		limit := curPeak
		if temp := t0 * (1 - float64(it)/float64(iters)); temp > 0 {
			limit += int64(-temp * math.Log(1-rng.Float64()))
		}
		off, peak, ok := pl.resume(next, curOff, i, limit, x)
		if !ok {
			continue
		}
		cur, next = next, cur
		curPeak = peak
		copy(curOff, off)
		if peak < bestPeak {
			best, bestPeak = slices.Clone(cur), peak
			if bestPeak <= bound {
				break
			}
		}
	}
	return best, bestPeak
}

// pollEvery is the graph size (tensors) from which improve polls Stop
// before every placement.
const pollEvery = 1024

// near picks a tensor alive at a random op of top's life: the tensors
// that share the peak's time are those that can move it.
func near(live [][]int32, iv Interval, rng *rand.Rand) int32 {
	at := live[iv.First+int32(rng.IntN(int(iv.Last-iv.First+1)))]
	return at[rng.IntN(len(at))]
}

// liveAt lists, per op position, the tensors alive there.
func liveAt(p *problem) [][]int32 {
	live := make([][]int32, p.steps)
	for i, v := range p.iv {
		for t := v.First; t <= v.Last; t++ {
			live[t] = append(live[t], int32(i))
		}
	}
	return live
}
