package memgraph

import (
	"cmp"
	"fmt"
	"slices"
)

// CheckSchedule verifies a prefetch schedule on its own terms, whoever
// made it, and returns the most bytes resident during an op:
//   - the ops run in r's order, one at a time, each for its duration;
//   - the copies are on one stream: none starts before the previous one
//     ended, each takes its tensor's bytes over the bandwidth (plus the
//     latency), and each is a host tensor's whole bytes;
//   - every use of a host tensor by an op is served by a copy of it that
//     ended by the op's start and is held (Release, the end of its last
//     op) until the op ends;
//   - with a cap, during every op, the activations alive there plus the
//     copies overlapping it in time (started before the op ends, serving
//     an op at or after it) fit the cap.
func CheckSchedule(g *Graph, r *Result, opt PrefetchOptions, s *Schedule) (int64, error) {
	c, err := compile(g)
	if err != nil {
		return 0, err
	}
	if err := opt.check(); err != nil {
		return 0, err
	}
	if err := planFits(c, r); err != nil {
		return 0, err
	}
	m := newPrefetchModel(g, c, r)
	n := c.nops
	if len(s.Ops) != n {
		return 0, fmt.Errorf("schedule check: %d ops, the graph has %d", len(s.Ops), n)
	}
	var prev int64
	for k, o := range s.Ops {
		if o.Op != c.opID[r.Order[k]] {
			return 0, fmt.Errorf("schedule check: op %d is %q, the plan runs %q", k, o.Op, c.opID[r.Order[k]])
		}
		if o.Start < prev || o.End-o.Start != m.dur[k] {
			return 0, fmt.Errorf("schedule check: op %q runs [%d, %d): before the previous op ended (%d) or not for its %d ns", o.Op, o.Start, o.End, prev, m.dur[k])
		}
		prev = o.End
	}
	if n > 0 && s.Makespan != s.Ops[n-1].End {
		return 0, fmt.Errorf("schedule check: makespan %d, the last op ends at %d", s.Makespan, s.Ops[n-1].End)
	}
	tensorIdx := make(map[string]int32, len(g.Tensors))
	for i := range g.Tensors {
		tensorIdx[g.Tensors[i].ID] = int32(i)
	}
	opIdx := make(map[string]int32, n)
	for i, id := range c.opID {
		opIdx[id] = int32(i)
	}
	type held struct {
		first, last int32 // positions
		end         int64
	}
	byTensor := map[int32][]held{}
	var streamFree int64
	lastPos := make([]int32, len(s.Copies))
	for i, cp := range s.Copies {
		t, ok := tensorIdx[cp.Tensor]
		if !ok || !c.host[t] || cp.Bytes != c.size[t] {
			return 0, fmt.Errorf("schedule check: copy %d: %q is not a host tensor of %d bytes", i, cp.Tensor, cp.Bytes)
		}
		if cp.Start < streamFree || cp.End-cp.Start != opt.copyNS(cp.Bytes) {
			return 0, fmt.Errorf("schedule check: copy %d (%q) [%d, %d) overlaps the previous copy (ends %d) or is not %d ns long", i, cp.Tensor, cp.Start, cp.End, streamFree, opt.copyNS(cp.Bytes))
		}
		streamFree = cp.End
		f, okf := opIdx[cp.FirstOp]
		l, okl := opIdx[cp.LastOp]
		if !okf || !okl || m.pos[f] > m.pos[l] {
			return 0, fmt.Errorf("schedule check: copy %d (%q): ops %q..%q", i, cp.Tensor, cp.FirstOp, cp.LastOp)
		}
		if cp.Release != s.Ops[m.pos[l]].End {
			return 0, fmt.Errorf("schedule check: copy %d (%q) released at %d, its last op ends at %d", i, cp.Tensor, cp.Release, s.Ops[m.pos[l]].End)
		}
		lastPos[i] = m.pos[l]
		byTensor[t] = append(byTensor[t], held{m.pos[f], m.pos[l], cp.End})
	}
	for k := range n {
		for _, t := range m.hostAt[k] {
			ok := false
			for _, h := range byTensor[t] {
				if h.first <= int32(k) && int32(k) <= h.last && h.end <= s.Ops[k].Start {
					ok = true
					break
				}
			}
			if !ok {
				return 0, fmt.Errorf("schedule check: op %q starts at %d before host tensor %q arrived", s.Ops[k].Op, s.Ops[k].Start, g.Tensors[t].ID)
			}
		}
	}
	// Memory, op by op: copies are added when they start before the op
	// ends and dropped after their last op.
	byStart := make([]int, len(s.Copies))
	for i := range byStart {
		byStart[i] = i
	}
	slices.SortStableFunc(byStart, func(a, b int) int { return cmp.Compare(s.Copies[a].Start, s.Copies[b].Start) })
	drop := make([]int64, n+1)
	var resident, peak int64
	next := 0
	for k := range n {
		for ; next < len(byStart) && s.Copies[byStart[next]].Start < s.Ops[k].End; next++ {
			if i := byStart[next]; lastPos[i] >= int32(k) {
				resident += s.Copies[i].Bytes
				drop[lastPos[i]+1] += s.Copies[i].Bytes
			}
		}
		resident -= drop[k]
		used := m.act[k] + resident
		if opt.Cap > 0 && used > opt.Cap {
			return 0, fmt.Errorf("schedule check: op %q holds %d bytes, over the cap of %d", s.Ops[k].Op, used, opt.Cap)
		}
		peak = max(peak, used)
	}
	return peak, nil
}
