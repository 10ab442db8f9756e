package memgraph

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// PrefetchOptions describe the copy stream and the device memory.
type PrefetchOptions struct {
	// Bandwidth of the host-to-device copy stream, bytes per second, in
	// [MinBandwidth, MaxBandwidth].
	Bandwidth int64 `json:"bandwidth"`
	// LatencyNS is a fixed cost per copy, in [0, MaxLatencyNS].
	LatencyNS int64 `json:"latency_ns,omitempty"`
	// Cap is the device bytes available to the graph: at every op, the
	// bytes of the activations alive there (every non-host tensor, by
	// the plan's lifetimes) plus the host tensors copied in or being
	// copied must fit. 0 means no cap.
	Cap int64 `json:"cap,omitempty"`
}

// Bounds on PrefetchOptions.
const (
	MinBandwidth = 1 << 20 // 1 MiB/s
	MaxBandwidth = 1 << 50
	MaxLatencyNS = 1e9
)

// Schedule is a checked prefetch schedule: copies on one copy stream,
// ops in the plan's order on one compute stream. Times are nanoseconds
// from the start.
type Schedule struct {
	Makespan    int64    `json:"makespan_ns"`     // end of the last op
	NoOverlap   int64    `json:"no_overlap_ns"`   // the same copies, then each op, serially
	ComputeOnly int64    `json:"compute_only_ns"` // the ops alone: a lower bound
	CopyTime    int64    `json:"copy_ns"`         // the copy stream's busy time
	CopyBytes   int64    `json:"copy_bytes"`
	PeakBytes   int64    `json:"peak_bytes"` // most bytes resident during an op
	Recopies    int      `json:"recopies"`   // copies of a tensor evicted and needed again
	Copies      []Copy   `json:"copies"`
	Ops         []OpTime `json:"ops"`
}

// Copy moves one host tensor to the device for the uses from FirstOp to
// LastOp; its memory is held from Start until Release, the end of LastOp.
type Copy struct {
	Tensor  string `json:"tensor"`
	Bytes   int64  `json:"bytes"`
	Start   int64  `json:"start_ns"`
	End     int64  `json:"end_ns"`
	Release int64  `json:"release_ns"`
	FirstOp string `json:"first_op"`
	LastOp  string `json:"last_op"`
}

// OpTime is when one op runs.
type OpTime struct {
	Op    string `json:"op"`
	Start int64  `json:"start_ns"`
	End   int64  `json:"end_ns"`
}

var (
	// ErrCapTooSmall means some op cannot run within the cap even with
	// only its own host tensors copied in.
	ErrCapTooSmall = errors.New("memgraph: memory cap too small")
	// ErrBadSchedule means Prefetch built a schedule that failed
	// CheckSchedule: a bug in memgraph, never returned as a schedule.
	ErrBadSchedule = errors.New("memgraph: prefetch produced an invalid schedule")
	// ErrBadOptions marks invalid PrefetchOptions.
	ErrBadOptions = errors.New("memgraph: invalid prefetch options")
)

func (o PrefetchOptions) check() error {
	if o.Bandwidth < MinBandwidth || o.Bandwidth > MaxBandwidth {
		return fmt.Errorf("%w: bandwidth %d outside [%d, %d] bytes/s", ErrBadOptions, o.Bandwidth, int64(MinBandwidth), int64(MaxBandwidth))
	}
	if o.LatencyNS < 0 || o.LatencyNS > MaxLatencyNS {
		return fmt.Errorf("%w: latency_ns %d outside [0, %d]", ErrBadOptions, o.LatencyNS, int64(MaxLatencyNS))
	}
	if o.Cap < 0 {
		return fmt.Errorf("%w: cap %d is negative", ErrBadOptions, o.Cap)
	}
	return nil
}

// copyNS is how long a copy of b bytes takes: latency plus b / bandwidth,
// rounded up. b <= MaxTensorBytes and bandwidth >= MinBandwidth keep it
// within 2^60.
func (o PrefetchOptions) copyNS(b int64) int64 {
	hi, lo := bits.Mul64(uint64(b), 1e9)
	q, r := bits.Div64(hi, lo, uint64(o.Bandwidth))
	if r != 0 {
		q++
	}
	return o.LatencyNS + int64(q)
}

// span is one copy of host tensor t serving its uses at op positions
// a..b (inclusive).
type span struct {
	t    int32
	a, b int32
}

// prefetchModel is what the scheduler and the checker share: the plan's
// order, each op's duration and activation bytes, and the host uses.
type prefetchModel struct {
	g      *Graph
	c      *compiled
	order  []int32
	pos    []int32   // op -> position
	dur    []int64   // per position
	act    []int64   // non-host bytes alive at each position
	uses   [][]int32 // per host tensor, sorted distinct positions; nil otherwise
	hostAt [][]int32 // per position, the host tensors it uses
}

func newPrefetchModel(g *Graph, c *compiled, r *Result) *prefetchModel {
	n := c.nops
	m := &prefetchModel{g: g, c: c, order: r.Order, pos: make([]int32, n), dur: make([]int64, n), act: make([]int64, n+1),
		uses: make([][]int32, len(c.size)), hostAt: make([][]int32, n)}
	for k, op := range r.Order {
		m.pos[op] = int32(k)
		m.dur[k] = g.Ops[op].Duration
	}
	for i, v := range c.intervals(r.Order) {
		if c.host[i] {
			continue
		}
		m.act[v.First] += c.size[i]
		m.act[v.Last+1] -= c.size[i]
	}
	for k := 1; k <= n; k++ {
		m.act[k] += m.act[k-1]
	}
	m.act = m.act[:n]
	for i := range c.size {
		if !c.host[i] {
			continue
		}
		for _, q := range c.consumers[i] {
			m.uses[i] = append(m.uses[i], m.pos[q])
		}
		slices.Sort(m.uses[i])
		m.uses[i] = slices.Compact(m.uses[i])
		for _, k := range m.uses[i] {
			m.hostAt[k] = append(m.hostAt[k], int32(i))
		}
	}
	return m
}

// Prefetch schedules the copies of g's host tensors, for plan r, onto one
// copy stream overlapping the ops (which run in r's order, each taking
// its duration_ns). Copies go in the order of their first use, each as
// early as the stream and the cap allow (it holds its bytes from its
// start); an op starts when the previous op has ended and its host
// tensors have arrived. Under a cap, a host tensor used by several ops
// stays on the device between two uses only when the bytes allow it
// (shortest gaps first); otherwise it is evicted after a use and copied
// again before the next. Every schedule returned passed CheckSchedule.
func Prefetch(g *Graph, r *Result, opt PrefetchOptions) (*Schedule, error) {
	c, err := compile(g)
	if err != nil {
		return nil, err
	}
	if err := opt.check(); err != nil {
		return nil, err
	}
	if err := planFits(c, r); err != nil {
		return nil, err
	}
	m := newPrefetchModel(g, c, r)
	spans, err := m.spans(opt.Cap)
	if err != nil {
		return nil, err
	}
	s := m.schedule(spans, opt)
	peak, err := CheckSchedule(g, r, opt, s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchedule, err)
	}
	s.PeakBytes = peak
	return s, nil
}

// spans decides which uses of each host tensor one copy serves. Without
// a cap, one copy serves all; with one, each use starts as its own span
// and the gaps between consecutive uses are bridged, shortest first,
// while the op-by-op bytes (activations plus the spans covering the op)
// stay within the cap.
func (m *prefetchModel) spans(cap int64) ([]span, error) {
	n := len(m.act)
	occ := slices.Clone(m.act)
	for k := range n {
		for _, t := range m.hostAt[k] {
			occ[k] += m.c.size[t]
		}
		if cap > 0 && occ[k] > cap {
			return nil, fmt.Errorf("%w: op %q needs %d bytes (%d of activations and its host tensors), over the cap of %d",
				ErrCapTooSmall, m.c.opID[m.order[k]], occ[k], m.act[k], cap)
		}
	}
	type gap struct {
		t    int32
		j    int // between uses[j] and uses[j+1]
		size int32
	}
	var gaps []gap
	bridged := make([][]bool, len(m.uses))
	var total int64
	for t, u := range m.uses {
		if len(u) > 1 {
			bridged[t] = make([]bool, len(u)-1)
			for j := range len(u) - 1 {
				gaps = append(gaps, gap{int32(t), j, u[j+1] - u[j]})
			}
		}
	}
	slices.SortStableFunc(gaps, func(a, b gap) int { return cmp.Compare(a.size, b.size) })
	tree := newMaxTree(occ)
	for _, gp := range gaps {
		u, b := m.uses[gp.t], m.c.size[gp.t]
		l, r := int(u[gp.j])+1, int(u[gp.j+1])-1
		if cap == 0 || tree.rangeMax(l, r)+b <= cap {
			bridged[gp.t][gp.j] = true
			if cap > 0 {
				tree.rangeAdd(l, r, b)
			}
		}
	}
	var out []span
	for t, u := range m.uses {
		for j := 0; j < len(u); {
			a := j
			for j+1 < len(u) && bridged[t][j] {
				j++
			}
			out = append(out, span{int32(t), u[a], u[j]})
			if total += m.c.size[t]; total > MaxTotalBytes {
				return nil, fmt.Errorf("%w: over %d bytes to copy", ErrBadOptions, int64(MaxTotalBytes))
			}
			j++
		}
	}
	slices.SortStableFunc(out, func(x, y span) int {
		if c := cmp.Compare(x.a, y.a); c != 0 {
			return c
		}
		return cmp.Compare(x.t, y.t)
	})
	return out, nil
}

// schedule places the spans' copies and the ops in time (see Prefetch).
// Memory is counted op by op: a copy that starts during an op counts for
// all of it, which CheckSchedule's exact accounting can only find lower.
func (m *prefetchModel) schedule(spans []span, opt PrefetchOptions) *Schedule {
	n := len(m.act)
	start, end := make([]int64, n), make([]int64, n)
	held := newMaxTree(m.act)               // with a cap: activations plus copies counted at each op
	copyEnd := make([][]int64, len(m.uses)) // per host tensor, per span in order
	s := &Schedule{Copies: make([]Copy, 0, len(spans)), Ops: make([]OpTime, n)}
	var free int64 // when the copy stream is free
	si := 0
	for k := range n {
		var prevEnd int64
		if k > 0 {
			prevEnd = end[k-1]
		}
		for ; si < len(spans) && int(spans[si].a) == k; si++ {
			sp := spans[si]
			b := m.c.size[sp.t]
			// The copy starts when the stream is free, or later if the
			// ops running then have no room for it: j0 is the earliest
			// op during which it may be resident.
			at := free
			if opt.Cap > 0 {
				jmin, _ := slices.BinarySearch(end[:k], free+1) // first op still running at free
				j0 := jmin
				if p := held.lastAbove(jmin, k-1, opt.Cap-b); p >= 0 {
					j0 = p + 1
				}
				if j0 > 0 {
					at = max(at, end[j0-1])
				}
				jr, _ := slices.BinarySearch(end[:k], at+1) // first op it is resident during
				held.rangeAdd(jr, int(sp.b), b)
			}
			d := opt.copyNS(b)
			free = at + d
			copyEnd[sp.t] = append(copyEnd[sp.t], free)
			s.Copies = append(s.Copies, Copy{Tensor: m.g.Tensors[sp.t].ID, Bytes: b, Start: at, End: free,
				FirstOp: m.c.opID[m.order[sp.a]], LastOp: m.c.opID[m.order[sp.b]]})
			s.CopyTime += d
			s.CopyBytes += b
		}
		st := prevEnd
		for _, t := range m.hostAt[k] {
			// The span serving op k is t's latest: its spans are
			// disjoint and placed in the order of their first uses.
			st = max(st, copyEnd[t][len(copyEnd[t])-1])
		}
		start[k], end[k] = st, st+m.dur[k]
		s.Ops[k] = OpTime{Op: m.c.opID[m.order[k]], Start: start[k], End: end[k]}
		s.ComputeOnly += m.dur[k]
	}
	copied := 0
	for i, sp := range spans {
		s.Copies[i].Release = end[sp.b]
		if len(copyEnd[sp.t]) > 0 {
			copied++
			copyEnd[sp.t] = nil
		}
	}
	s.Recopies = len(spans) - copied
	if n > 0 {
		s.Makespan = end[n-1]
	}
	s.NoOverlap = s.ComputeOnly + s.CopyTime
	return s
}
