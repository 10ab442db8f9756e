package causal

import (
	"cmp"
	"slices"
)

// MinGap is the longest idle gap on a GPU stream that the model keeps as
// it is (launch latency, an event's signalling): a longer one is modelled
// as a wait (see ImportChrome).
const MinGap = 10_000 // ns

// Where ChromeReport.IterationsFrom says iterations came from.
const (
	FromMarkers = "markers" // ProfilerStep#N events
	FromRepeats = "repeats" // the kernel sequence repeating on streams and threads
	FromNone    = "none"    // not found: the trace is one iteration
)

// GapReport counts the idle gaps on GPU streams (longer than MinGap, after
// a predecessor in the same iteration) by how they were modelled.
type GapReport struct {
	// Event: a span of another GPU stream ended in the gap, the latest
	// one as the span started; it is made a dependency (an event wait
	// the trace does not draw).
	Event int `json:"event"`
	// Host: a host call ended in the gap, and nothing on the GPU later,
	// and the span's launch is not in the trace; it is made a dependency
	// (the launch came late).
	Host int `json:"host"`
	// HostUnseen: nothing ended in the gap; the span waited for a launch
	// the trace does not show, so it starts no earlier than it did
	// (Span.HostWait).
	HostUnseen int `json:"host_unseen"`
	// Lag: no other stream's GPU work ended in the gap, and the span's
	// launch is in the trace and returned before it (so no host call
	// ending in the gap released it): the gap stays as lag behind its
	// predecessor (a wait the trace does not explain).
	Lag int `json:"lag"`
}

// thread is one pid/tid's kept slices, in start order.
type thread struct {
	s   []*slice
	gpu bool
}

func (im *importer) threads() []*thread {
	index := map[string]*thread{}
	var out []*thread
	for _, s := range im.slices { // in span order
		k := s.pid + "/" + s.tid
		t := index[k]
		if t == nil {
			t = &thread{}
			index[k] = t
			out = append(out, t)
		}
		t.s = append(t.s, s)
		t.gpu = t.gpu || s.gpu
	}
	return out
}

// repeats returns how many times seq is a whole number of copies of one
// block, the most it can be: len(seq) over its least period when that
// period divides len(seq), else 1 (KMP's failure function).
func repeats[T comparable](seq []T) int {
	n := len(seq)
	if n == 0 {
		return 0
	}
	fail := make([]int, n)
	for i, k := 1, 0; i < n; i++ {
		for k > 0 && seq[i] != seq[k] {
			k = fail[k-1]
		}
		if seq[i] == seq[k] {
			k++
		}
		fail[i] = k
	}
	if p := n - fail[n-1]; n%p == 0 {
		return n / p
	}
	return 1
}

// periodWork bounds the comparisons region makes for one thread.
const periodWork = 1 << 22

// region finds the longest stretch of seq that is copies of one block:
// it starts at a, its block is p long and it holds c ≥ 2 whole copies (c
// = 0 when none). Of stretches covering as much, the one with the shorter
// block wins. Blocks up to periodWork/len(seq) long are tried, and the
// least period of the whole sequence.
func region[T comparable](seq []T) (a, p, c int) {
	n := len(seq)
	if r := repeats(seq); r >= 2 {
		return 0, n / r, r
	}
	for q := 1; 2*q <= n && q*n <= periodWork; q++ {
		run := 0
		for i := 0; i <= n-q; i++ {
			if i < n-q && seq[i] == seq[i+q] {
				run++
				continue
			}
			if k := (run + q) / q; k >= 2 && k*q > c*p {
				a, p, c = i-run, q, k
			}
			run = 0
		}
	}
	return a, p, c
}

// inferIterations numbers iterations in a trace without markers. On each
// thread (stream) the longest stretch of its kernel sequence made of
// copies of one block is found (a setup before it, a partial iteration
// after it are left out); N iterations are chosen so that the threads
// whose stretch holds a multiple of N copies hold the most spans in them
// (the larger N on a tie), and at least half of all; N must be repeated
// by two threads, or by one whose block holds two kernels or more. On
// those threads, the k-th N-th of the stretch is iteration k. A span of
// another thread takes the iteration of a span it depends on or that
// depends on it (a launch, its kernel), else of the iteration whose time
// window (its spans' earliest start to latest end) it overlaps most, else
// of the next window; one before the first window or after the last is
// dropped.
func (im *importer) inferIterations(edges []edge) {
	ths := im.threads()
	im.rep.Tracks = len(ths)
	type stretch struct{ a, p, c int }
	reps := make([]stretch, len(ths))
	score := map[int]int{}
	// A count is believed when two threads repeat it, or one whose block
	// holds two kernels or more: one kernel over and over on one thread
	// (a host thread's launch calls) says nothing of iterations.
	tracks, mixed := map[int]int{}, map[int]bool{}
	intern := map[string]int32{}
	for i, t := range ths {
		names := make([]int32, len(t.s)) // compared as numbers: fast
		for k, s := range t.s {
			id, ok := intern[s.name]
			if !ok {
				id = int32(len(intern))
				intern[s.name] = id
			}
			names[k] = id
		}
		a, p, c := region(names)
		reps[i] = stretch{a, p, c}
		for d := 2; d <= c; d++ {
			if c%d == 0 {
				score[d] += c * p
				tracks[d]++
				if c/d*p > 1 && slices.ContainsFunc(names[a+1:a+c/d*p], func(n int32) bool { return n != names[a] }) {
					mixed[d] = true
				}
			}
		}
	}
	best, bestScore := 0, 0
	for n, sc := range score {
		if tracks[n] < 2 && !mixed[n] {
			continue
		}
		if sc > bestScore || sc == bestScore && n > best {
			best, bestScore = n, sc
		}
	}
	if best < 2 || 2*bestScore < len(im.slices) {
		im.rep.IterationsFrom = FromNone
		im.rep.Warning = "no iterations found (no ProfilerStep#N markers, and no kernel sequence repeats on enough of the streams): " +
			"the whole trace is profiled as one iteration, so shares, influence and gains are of the whole trace's time, " +
			"and gaps on host threads between what may be iterations count as host work that does not move"
		for _, s := range im.slices {
			s.iter = 0
		}
		return
	}
	im.rep.IterationsFrom, im.rep.Iterations = FromRepeats, best
	for i, t := range ths {
		r := reps[i]
		if r.c < 2 || r.c%best != 0 {
			continue
		}
		im.rep.RepeatingTracks++
		block := r.c / best * r.p
		for k, s := range t.s[r.a : r.a+r.c*r.p] {
			s.iter = k / block
		}
	}
	for changed, pass := true, 0; changed && pass < 64; pass++ {
		changed = false
		for _, e := range edges {
			switch {
			case e.to.iter < 0 && e.from.iter >= 0:
				e.to.iter, changed = e.from.iter, true
			case e.from.iter < 0 && e.to.iter >= 0:
				e.from.iter, changed = e.to.iter, true
			}
		}
	}
	// Each iteration's window: its assigned spans' earliest start and
	// latest end.
	lo, hi := make([]int64, best), make([]int64, best)
	seen := make([]bool, best)
	for _, s := range im.slices {
		if k := s.iter; k >= 0 {
			if !seen[k] {
				lo[k], hi[k], seen[k] = s.start, s.end, true
			}
			lo[k], hi[k] = min(lo[k], s.start), max(hi[k], s.end)
		}
	}
	for _, s := range im.slices {
		if s.iter < 0 {
			s.iter = window(s, lo, hi, seen)
		}
		switch s.iter {
		case -1:
			im.drop(s.ev, "before the first inferred iteration")
			s.dropped = true
		case -2:
			im.drop(s.ev, "after the last inferred iteration")
			s.dropped = true
		}
	}
}

// window returns the iteration whose window a span overlaps most; for a
// span between two windows, the next one (the host prepares an iteration
// before its kernels run); -1 before the first window, -2 after the last.
func window(s *slice, lo, hi []int64, seen []bool) int {
	best, most := -1, int64(-1)
	first, last := true, true
	next := -1
	for k := range lo {
		if !seen[k] {
			continue
		}
		ov := min(s.end, hi[k]) - max(s.start, lo[k])
		if inside := ov > 0 || s.start >= lo[k] && s.end <= hi[k]; inside && ov > most {
			best, most = k, ov
		}
		if s.end > lo[k] {
			first = false
		}
		if s.start < hi[k] {
			last = false
		}
		if next < 0 && lo[k] >= s.end {
			next = k
		}
	}
	switch {
	case best >= 0:
		return best
	case first:
		return -1
	case last:
		return -2
	}
	return next
}

// modelGaps models each idle gap longer than MinGap on a GPU stream,
// between a span and its latest-ending predecessor in its iteration (the
// stream's previous span, a dependency) or, for a span with none, its
// iteration's start, as a wait: on the latest span of
// another thread to end in the gap (a dependency is added), or, when none
// did, on the host (HostWait). It returns the edges added.
func (im *importer) modelGaps(edges []edge) []edge {
	var kept []*slice
	for _, s := range im.slices {
		if !s.dropped {
			kept = append(kept, s)
		}
	}
	byEnd := slices.Clone(kept)
	slices.SortStableFunc(byEnd, func(a, b *slice) int { return cmp.Or(cmp.Compare(a.iter, b.iter), cmp.Compare(a.end, b.end)) })
	latest := map[*slice]int64{}
	has := map[*slice]bool{}
	pred := func(from, to *slice) {
		if from.dropped || from.iter != to.iter {
			return
		}
		if !has[to] || from.end > latest[to] {
			latest[to], has[to] = from.end, true
		}
	}
	for _, e := range edges {
		pred(e.from, e.to)
	}
	first := map[int]int64{} // each iteration's earliest start
	for _, s := range kept {
		if v, ok := first[s.iter]; !ok || s.start < v {
			first[s.iter] = s.start
		}
	}
	var added []edge
	for _, t := range im.threads() {
		var prev *slice
		for _, s := range t.s {
			if s.dropped {
				continue
			}
			if prev != nil {
				pred(prev, s)
			}
			prev = s
			if !has[s] {
				// A first span waits from its iteration's start.
				latest[s], has[s] = first[s.iter], true
			}
			if !t.gpu || !has[s] || s.start-latest[s] <= MinGap {
				continue
			}
			// The latest span of another thread, in s's iteration, to
			// end in (latest[s], s.start].
			k, _ := slices.BinarySearchFunc(byEnd, s, func(a, s *slice) int {
				return cmp.Or(cmp.Compare(a.iter, s.iter), cmp.Compare(a.end, s.start), -1)
			})
			// A span whose launch is in the trace was launched before
			// the gap began (the launch is a predecessor): no host call
			// ending in the gap released it, only another stream's GPU
			// work (an event wait) can have.
			launched := s.corr != "" && im.launches[s.corr] != nil
			var on *slice
			for j := k - 1; j >= 0; j-- {
				c := byEnd[j]
				if c.iter != s.iter || c.end <= latest[s] {
					break
				}
				if (c.pid != s.pid || c.tid != s.tid) && c.id < s.id && (c.gpu || !launched) {
					on = c
					break
				}
			}
			switch {
			case on == nil && launched:
				// Its launch is in the trace and returned before the
				// gap: it waited for no host call; the gap stays as
				// lag behind its predecessor.
				im.rep.Gaps.Lag++
			case on == nil:
				s.hostWait = true
				im.rep.Gaps.HostUnseen++
			case on.gpu:
				im.rep.Gaps.Event++
			default:
				im.rep.Gaps.Host++
			}
			if on != nil {
				added = append(added, edge{on, s})
			}
		}
	}
	return added
}
