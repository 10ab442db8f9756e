package causal

import (
	"fmt"
	"math"
)

// Change is a counterfactual on every span of one kernel (and, when Problem
// is set, of that problem only). Changes apply in the order given, so a
// later one sees the duration an earlier one left.
type Change struct {
	Kernel  string
	Problem string  // "" matches every problem
	Scale   float64 // new duration = old × Scale, rounded to ns (0.9 is 10% faster); used when Set is false
	Set     bool    // every matching span takes Duration ns
	// Duration in ns, used when Set is true: "K at its tuned time".
	Duration int64
}

// Faster is the change "kernel pct% faster" (a negative pct is slower).
func Faster(kernel string, pct float64) Change {
	return Change{Kernel: kernel, Scale: 1 - pct/100}
}

// At is the change "every span of kernel takes ns".
func At(kernel string, ns int64) Change {
	return Change{Kernel: kernel, Set: true, Duration: ns}
}

func (c Change) apply(d int64) int64 {
	if c.Set {
		return c.Duration
	}
	return int64(math.Round(float64(d) * c.Scale))
}

func (g *Graph) checkChange(k int, c Change) (int32, error) {
	switch {
	case c.Set && (c.Duration < 0 || c.Duration > MaxDuration):
		return 0, fmt.Errorf("change %d: duration %d is outside [0, 2^44]", k, c.Duration)
	case !c.Set && !(c.Scale >= 0 && c.Scale <= MaxScale):
		return 0, fmt.Errorf("change %d: scale %v is outside [0, %d]", k, c.Scale, MaxScale)
	}
	for id, name := range g.kernels {
		if name == c.Kernel {
			return int32(id), nil
		}
	}
	return 0, fmt.Errorf("change %d: kernel %q is not in the pipeline", k, c.Kernel)
}

// Durations returns each span's duration under changes.
func (g *Graph) Durations(changes ...Change) ([]int64, error) {
	dur := append([]int64(nil), g.dur...)
	for k, c := range changes {
		id, err := g.checkChange(k, c)
		if err != nil {
			return nil, err
		}
		for i := range dur {
			if g.kernel[i] == id && (c.Problem == "" || c.Problem == g.spans[i].Problem) {
				dur[i] = c.apply(dur[i])
			}
		}
	}
	return dur, nil
}

// Simulate returns the end-to-end time in ns with changes applied.
func (g *Graph) Simulate(changes ...Change) (int64, error) {
	dur, err := g.Durations(changes...)
	if err != nil {
		return 0, err
	}
	return g.Replay(dur, nil, nil), nil
}

// Replay runs the graph with the given durations (one per span) and returns
// the end-to-end time. When start and end are not nil (len = spans) it
// fills them with each span's simulated times.
func (g *Graph) Replay(dur, start, end []int64) int64 {
	if end == nil {
		end = make([]int64, len(g.spans))
	}
	last := int64(math.MinInt64)
	for _, i32 := range g.order {
		i := int(i32)
		s := g.start[i]
		if p := g.predsOf(i); len(p) > 0 {
			latest := end[p[0]]
			for _, j := range p[1:] {
				latest = max(latest, end[j])
			}
			s = latest + g.lag[i]
			if g.host[i] {
				s = max(s, g.start[i])
			}
		}
		if start != nil {
			start[i] = s
		}
		end[i] = s + dur[i]
		if g.isSink(i) {
			last = max(last, end[i])
		}
	}
	return last - g.t0
}

// CriticalPath returns the spans (indices, first to last) of the recorded
// run's critical path: from the span (the sink, in a view made by EndAt)
// that ends last, back through the
// predecessor each one waited for last, to a root or a span that waited
// for the host. Ties go to the lower
// index.
func (g *Graph) CriticalPath() []int {
	last := -1
	for i, s := range g.spans {
		if g.isSink(i) && (last < 0 || s.End > g.spans[last].End) {
			last = i
		}
	}
	path := []int{last}
	for at := last; ; {
		p := g.predsOf(at)
		if len(p) == 0 {
			break
		}
		next := int(p[0])
		for _, j := range p[1:] {
			if g.spans[j].End > g.spans[next].End {
				next = int(j)
			}
		}
		if g.host[at] && g.spans[next].End+g.lag[at] < g.start[at] {
			break // it waited for the host, not for a predecessor
		}
		path = append(path, next)
		at = next
	}
	for a, b := 0, len(path)-1; a < b; a, b = a+1, b-1 {
		path[a], path[b] = path[b], path[a]
	}
	return path
}

// Slack returns, per span, how many ns longer it may take in the recorded
// run before the end-to-end time grows. Spans on a critical path have 0.
func (g *Graph) Slack() []int64 { return g.SlackTo(nil) }

// SlackTo returns, per span, how many ns longer it may take in the
// recorded run before the latest end among the sink spans grows (sink
// nil: the graph's end, as Slack). A span no sink depends on, even
// through others, has MaxTime. With the sinks a step's GPU work, it is
// the slack against the step's last GPU op (EndAt makes that a view).
func (g *Graph) SlackTo(sink func(i int) bool) []int64 {
	if sink == nil {
		sink = g.isSink
	}
	n := len(g.spans)
	var tend int64 = math.MinInt64
	for i, s := range g.spans {
		if sink(i) {
			tend = max(tend, s.End)
		}
	}
	latest := make([]int64, n) // latest end that keeps tend
	for k := n - 1; k >= 0; k-- {
		i := int(g.order[k])
		le := int64(MaxTime)
		if sink(i) {
			le = tend
		}
		for _, c := range g.succsOf(i) {
			if latest[c] < MaxTime {
				le = min(le, latest[c]-g.dur[c]-g.lag[c])
			}
		}
		latest[i] = le
	}
	for i := range latest {
		if latest[i] < MaxTime {
			latest[i] -= g.spans[i].End
		}
	}
	return latest
}

// EndAt returns the view of g whose end is the latest end among the sink
// spans, not among all: its end-to-end time runs from g's earliest start
// to there, and Replay, Simulate, CriticalPath, Slack, Profile, Attributed
// and TrackShares are all to that end. Spans that no sink depends on, even
// through others, cannot move it: they are no rows (as boundaries are) and
// have MaxTime of slack. With a step's GPU work as the sinks, it answers
// "which kernels bound when the step's GPU work is done", where the host,
// not the GPU, ends the step (ChromeReport.GPUWork). With no sink among
// the spans it returns g. The view shares g's arrays: it is read-only too.
func (g *Graph) EndAt(sink func(i int) bool) *Graph {
	n := len(g.spans)
	v := *g
	v.sink, v.reach = make([]bool, n), make([]bool, n)
	end, found := int64(math.MinInt64), false
	for k := n - 1; k >= 0; k-- { // successors first
		i := int(g.order[k])
		if sink(i) {
			v.sink[i], v.reach[i], found = true, true, true
			end = max(end, g.spans[i].End)
			continue
		}
		for _, c := range g.succsOf(i) {
			if v.reach[c] {
				v.reach[i] = true
				break
			}
		}
	}
	if !found {
		return g
	}
	v.base = end - g.t0
	return &v
}

// isSink says whether span i's end is the graph's end, or may be.
func (g *Graph) isSink(i int) bool { return g.sink == nil || g.sink[i] }

// reaches says whether span i can move the graph's end: every span of a
// whole graph, the sinks and what they depend on in a view.
func (g *Graph) reaches(i int) bool { return g.reach == nil || g.reach[i] }
