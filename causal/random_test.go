package causal

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomDAG is a pipeline made the way a runtime would record it: spans in
// creation order, each on a stream after the previous span there, waiting
// for some earlier spans, started a random lag (possibly negative across
// streams) after the latest of them.
type randomDAG struct {
	spans []Span  // creation order
	preds [][]int // program order and deps, by creation index
}

func newRandomDAG(rng *rand.Rand) randomDAG {
	n := 1 + rng.IntN(12)
	streams, kernels := 1+rng.IntN(3), 1+rng.IntN(4)
	d := randomDAG{spans: make([]Span, n), preds: make([][]int, n)}
	last := map[int]int{}
	ids := rng.Perm(1000)[:n]
	for i := range n {
		st := rng.IntN(streams)
		s := Span{ID: uint64(ids[i] + 1), Pipeline: "p", Kernel: fmt.Sprint("k", rng.IntN(kernels)),
			Problem: fmt.Sprint("p", rng.IntN(2)), Device: "d", Stream: fmt.Sprint("s", st)}
		var predEnd int64 = math.MinInt64
		if j, ok := last[st]; ok {
			d.preds[i] = append(d.preds[i], j)
			predEnd = d.spans[j].End
		}
		for j := range i {
			if rng.IntN(4) == 0 && (len(d.preds[i]) == 0 || d.preds[i][0] != j) {
				d.preds[i] = append(d.preds[i], j)
				s.Deps = append(s.Deps, d.spans[j].ID)
				predEnd = max(predEnd, d.spans[j].End+int64(rng.IntN(16)-5))
			}
		}
		if len(d.preds[i]) == 0 {
			s.Start = int64(rng.IntN(20))
		} else {
			s.Start = predEnd + int64(rng.IntN(10))
			if j, ok := last[st]; ok {
				s.Start = max(s.Start, d.spans[j].End)
			}
		}
		s.End = s.Start + 1 + int64(rng.IntN(50))
		s.HostWait = len(d.preds[i]) > 0 && rng.IntN(4) == 0
		d.spans[i] = s
		last[st] = i
	}
	return d
}

// bruteEndToEnd enumerates every path from a root or a span that waits
// for the host and takes the longest: a path's end is its first span's
// recorded start plus, along it, each span's new duration and each later
// span's recorded lag (start minus the latest end of its predecessors; no
// more than 0 for a host wait).
func (d randomDAG) bruteEndToEnd(dur []int64) int64 { return d.bruteEndToEndAt(dur, nil) }

// bruteEndToEndAt is bruteEndToEnd to the latest end among the spans
// sink holds (nil: all), as Graph.EndAt measures.
func (d randomDAG) bruteEndToEndAt(dur []int64, sink func(s Span) bool) int64 {
	n := len(d.spans)
	succs := make([][]int, n)
	lag := make([]int64, n)
	t0 := d.spans[0].Start
	for i, s := range d.spans {
		t0 = min(t0, s.Start)
		var latest int64 = math.MinInt64
		for _, p := range d.preds[i] {
			succs[p] = append(succs[p], i)
			latest = max(latest, d.spans[p].End)
		}
		lag[i] = s.Start - latest
		if s.HostWait {
			lag[i] = min(lag[i], 0)
		}
	}
	var best int64 = math.MinInt64
	var walk func(i int, end int64)
	walk = func(i int, end int64) {
		if sink == nil || sink(d.spans[i]) {
			best = max(best, end)
		}
		for _, c := range succs[i] {
			walk(c, end+lag[c]+dur[c])
		}
	}
	for i, s := range d.spans {
		if len(d.preds[i]) == 0 || s.HostWait {
			walk(i, s.Start+dur[i])
		}
	}
	return best - t0
}

func randomChanges(rng *rand.Rand, kernels []string) []Change {
	var cs []Change
	for range 1 + rng.IntN(3) {
		k := kernels[rng.IntN(len(kernels))]
		var c Change
		switch rng.IntN(3) {
		case 0:
			c = Faster(k, float64(rng.IntN(151)-50))
		case 1:
			c = At(k, int64(rng.IntN(60)))
		default:
			c = Change{Kernel: k, Problem: fmt.Sprint("p", rng.IntN(2)), Scale: rng.Float64() * 3}
		}
		cs = append(cs, c)
	}
	return cs
}

// bruteDurations applies changes without the package's code.
func bruteDurations(spans []Span, cs []Change) []int64 {
	dur := make([]int64, len(spans))
	for i, s := range spans {
		dur[i] = s.End - s.Start
		for _, c := range cs {
			if c.Kernel != s.Kernel || (c.Problem != "" && c.Problem != s.Problem) {
				continue
			}
			if c.Set {
				dur[i] = c.Duration
			} else {
				dur[i] = int64(math.Round(float64(dur[i]) * c.Scale))
			}
		}
	}
	return dur
}

func TestRandomDAGsAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2026))
	for trial := range 2000 {
		d := newRandomDAG(rng)
		// The batch order must not matter: hand the spans over shuffled.
		perm := rng.Perm(len(d.spans))
		batch := make([]Span, len(d.spans))
		for k, i := range perm {
			batch[k] = d.spans[i]
		}
		g, err := Build(batch)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		checkReplay(t, g)
		if got, want := g.EndToEnd(), d.bruteEndToEnd(bruteDurations(d.spans, nil)); got != want {
			t.Fatalf("trial %d: recorded end-to-end %d, brute force %d", trial, got, want)
		}
		for range 3 {
			cs := randomChanges(rng, g.Kernels())
			got, err := g.Simulate(cs...)
			want := d.bruteEndToEnd(bruteDurations(d.spans, cs))
			if err != nil || got != want {
				t.Fatalf("trial %d: %+v gives %d (%v), brute force %d", trial, cs, got, err, want)
			}
		}
		checkCriticalPath(t, g)
		checkSlack(t, g)
		for _, p := range g.Profile() {
			if p.Share < 0 || p.Share > 1 {
				t.Fatalf("trial %d: kernel %s@%s has share %v", trial, p.Kernel, p.Problem, p.Share)
			}
		}
		checkOffPathKernels(t, g)
		// Measured to stream s0's end only (Graph.EndAt).
		s0 := func(s Span) bool { return s.Stream == "s0" }
		if !slices.ContainsFunc(batch, s0) {
			s0 = nil // EndAt returns the graph: to every span's end
		}
		v := g.EndAt(func(i int) bool { return s0 == nil || s0(batch[i]) })
		checkReplay(t, v)
		if got, want := v.EndToEnd(), d.bruteEndToEndAt(bruteDurations(d.spans, nil), s0); got != want {
			t.Fatalf("trial %d: end-to-end to s0 %d, brute force %d", trial, got, want)
		}
		cs := randomChanges(rng, g.Kernels())
		got, err := v.Simulate(cs...)
		if want := d.bruteEndToEndAt(bruteDurations(d.spans, cs), s0); err != nil || got != want {
			t.Fatalf("trial %d: to s0, %+v gives %d (%v), brute force %d", trial, cs, got, err, want)
		}
		checkCriticalPath(t, v)
		checkSlack(t, v)
		checkOffPathKernels(t, v)
	}
}

// checkCriticalPath: the path starts at a root, each step is a
// predecessor the next span waited for last, and it ends at the latest end.
func checkCriticalPath(t *testing.T, g *Graph) {
	t.Helper()
	spans, path := g.Spans(), g.CriticalPath()
	if len(g.Preds(path[0])) != 0 && !spans[path[0]].HostWait {
		t.Fatalf("critical path %v starts at a non-root", path)
	}
	if end := spans[path[len(path)-1]].End; end-g.t0 != g.EndToEnd() {
		t.Fatalf("critical path ends at %d, end-to-end %d from %d", end, g.EndToEnd(), g.t0)
	}
	for k := 1; k < len(path); k++ {
		p, s := path[k-1], path[k]
		if spans[p].End+g.Lag(s) != spans[s].Start {
			t.Fatalf("critical path step %d -> %d is not tight", p, s)
		}
	}
}

// checkSlack: taking slack longer keeps the end-to-end time, one ns more
// grows it by one ns.
func checkSlack(t *testing.T, g *Graph) {
	t.Helper()
	base, _ := g.Durations()
	for i, sl := range g.Slack() {
		if sl < 0 {
			t.Fatalf("span %d has negative slack %d", i, sl)
		}
		dur := append([]int64(nil), base...)
		if sl == MaxTime { // no end depends on it (Graph.EndAt)
			if dur[i] += MaxDuration; g.Replay(dur, nil, nil) != g.EndToEnd() {
				t.Fatalf("span %d with MaxTime of slack moves the end", i)
			}
			continue
		}
		dur[i] += sl
		if e := g.Replay(dur, nil, nil); e != g.EndToEnd() {
			t.Fatalf("span %d longer by its slack %d: end-to-end %d, was %d", i, sl, e, g.EndToEnd())
		}
		dur[i]++
		if e := g.Replay(dur, nil, nil); e != g.EndToEnd()+1 {
			t.Fatalf("span %d longer by slack+1: end-to-end %d, want %d", i, e, g.EndToEnd()+1)
		}
	}
}

// checkOffPathKernels: a kernel with slack everywhere gains nothing.
func checkOffPathKernels(t *testing.T, g *Graph) {
	t.Helper()
	for _, p := range g.Profile() {
		if p.Slack == 0 {
			continue
		}
		for _, pt := range p.Curve {
			if pt.Speedup != 0 {
				t.Fatalf("kernel %s with slack %d gains %v at %v", p.Kernel, p.Slack, pt.Speedup, pt.KernelSpeedup)
			}
		}
	}
}
