package causal

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
)

// Estimate summarises one figure over a pipeline's recorded iterations.
type Estimate struct {
	N      int     `json:"n"` // iterations in which the kernel ran
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Q1     float64 `json:"q1"`
	Q3     float64 `json:"q3"`
	Max    float64 `json:"max"`
	// Lo and Hi bound a 95% bootstrap interval of the median.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// KernelSpread is a kernel's profile over iterations (of its spans at
// Problem, when the kernel is split by problem: see SplitKernels).
type KernelSpread struct {
	Kernel    string     `json:"kernel"`
	Problem   string     `json:"problem,omitempty"`
	Share     Estimate   `json:"share"`
	Influence Estimate   `json:"influence"`
	Curve     []Estimate `json:"curve"` // Speedup at 0, 5, ..., 50% (CurveStep)
	// Critical is the kernel's time on the critical path as a fraction of
	// the end-to-end time.
	Critical Estimate `json:"critical"`
	// Gain is the fraction of end-to-end time saved with the kernel's
	// spans changed by SpreadOptions.Tuned ("K at its tuned time"); nil
	// when Tuned has no change for the kernel.
	Gain *Estimate `json:"gain,omitempty"`
	// Slack is, in ns, how much longer the kernel's spans may take in an
	// iteration before its end-to-end time grows (KernelProfile.Slack,
	// the least of its spans'); 0 on the critical path.
	Slack Estimate `json:"slack_ns"`
}

// SpreadOptions configures Spread. RNG is required: it draws the bootstrap
// resamples, so a seeded RNG gives the same intervals every time.
type SpreadOptions struct {
	RNG       *rand.Rand
	Resamples int // bootstrap resamples; 0 means 1000
	// Tuned holds, by kernel, the changes that make its spans take their
	// tuned time (one per problem, say); they give KernelSpread.Gain.
	Tuned map[string][]Change
	// End, when set, measures each iteration to the latest end among the
	// spans it holds (Graph.EndAt), not to its last span: with
	// ChromeReport.GPUWork, to the step's last GPU op. An iteration with
	// none of them is measured to its end.
	End func(Span) bool
}

// PipelineSpread is what SpreadIterations says of a pipeline.
type PipelineSpread struct {
	Iterations int            `json:"iterations"`
	EndToEnd   Estimate       `json:"end_to_end_ns"` // recorded end-to-end time of an iteration, in ns
	Kernels    []KernelSpread `json:"kernels"`       // in kernel-name order
	// Attributed is the share of an iteration's critical path in spans
	// (Graph.Attributed); Tracks each track's busy share, never above 1.
	Attributed Estimate      `json:"attributed"`
	Tracks     []TrackSpread `json:"tracks"`
	// EndedAt counts the iterations measured to SpreadOptions.End's spans.
	EndedAt int `json:"ended_at,omitempty"`
}

// Spread builds one graph per iteration (dependencies that cross
// iterations are dropped) and summarises each kernel's share, influence and
// curve over the iterations, in kernel-name order.
func Spread(spans []Span, opt SpreadOptions) ([]KernelSpread, error) {
	if opt.RNG == nil {
		return nil, errors.New("spread: no RNG")
	}
	if err := Validate(spans); err != nil {
		return nil, err
	}
	ps, err := SpreadIterations(byIteration(spans), opt)
	return ps.Kernels, err
}

// SpreadIterations is Spread over iterations already split: each element
// of iters is one iteration's spans, which must build a graph on their own
// (no dependency outside it). Only the graphs are checked, not the spans
// of different iterations against each other, so iterations recorded by
// different processes (whose clocks differ) can be summarised together.
func SpreadIterations(iters [][]Span, opt SpreadOptions) (PipelineSpread, error) {
	if opt.RNG == nil {
		return PipelineSpread{}, errors.New("spread: no RNG")
	}
	if opt.Resamples <= 0 {
		opt.Resamples = 1000
	}
	type series struct {
		share, infl, crit, gain, slack []float64
		curve                          [CurveSteps][]float64
	}
	byKernel := map[ident]*series{}
	var e2e, attributed []float64
	tracks := map[Track][]float64{}
	// Split over all iterations, so a kernel has the same rows in each.
	var all []Span
	for _, it := range iters {
		all = append(all, it...)
	}
	split := SplitKernels(all)
	ended := 0
	for n, it := range iters {
		g, err := Build(it)
		if err != nil {
			return PipelineSpread{}, fmt.Errorf("iteration %d (#%d): %w", iterOf(it), n, err)
		}
		if opt.End != nil {
			if v := g.EndAt(func(i int) bool { return opt.End(it[i]) }); v != g {
				g = v
				ended++
			}
		}
		e2e = append(e2e, float64(g.EndToEnd()))
		attributed = append(attributed, g.Attributed())
		for t, b := range g.TrackShares() {
			tracks[t] = append(tracks[t], b)
		}
		for _, p := range g.profile(split) {
			id := ident{p.Kernel, p.Problem}
			s := byKernel[id]
			if s == nil {
				s = &series{}
				byKernel[id] = s
			}
			s.share = append(s.share, p.Share)
			s.infl = append(s.infl, p.Influence)
			for k, pt := range p.Curve {
				s.curve[k] = append(s.curve[k], pt.Speedup)
			}
			crit := 0.0
			if g.base > 0 {
				crit = float64(p.CriticalTime) / float64(g.base)
			}
			s.crit = append(s.crit, crit)
			s.slack = append(s.slack, float64(p.Slack))
			if ch, ok := tunedFor(opt.Tuned, id, split); ok {
				t, err := g.Simulate(ch...)
				if err != nil {
					return PipelineSpread{}, fmt.Errorf("iteration %d (#%d): tuned %s: %w", iterOf(it), n, p.Kernel, err)
				}
				s.gain = append(s.gain, g.speedup(t))
			}
		}
	}
	out := PipelineSpread{Iterations: len(iters), Kernels: make([]KernelSpread, 0, len(byKernel)), EndedAt: ended}
	names := make([]ident, 0, len(byKernel))
	for name := range byKernel {
		names = append(names, name)
	}
	// The RNG is drawn in this order: same seed, same answer.
	slices.SortFunc(names, ident.compare)
	for _, name := range names {
		s := byKernel[name]
		ks := KernelSpread{Kernel: name.kernel, Problem: name.problem, Share: estimate(s.share, opt), Influence: estimate(s.infl, opt)}
		for _, c := range s.curve {
			ks.Curve = append(ks.Curve, estimate(c, opt))
		}
		out.Kernels = append(out.Kernels, ks)
	}
	// Drawn after the figures above, which so keep the draws they had
	// before these were added.
	for k, name := range names {
		s := byKernel[name]
		out.Kernels[k].Critical = estimate(s.crit, opt)
		if len(s.gain) > 0 {
			e := estimate(s.gain, opt)
			out.Kernels[k].Gain = &e
		}
	}
	if len(e2e) > 0 {
		out.EndToEnd = estimate(e2e, opt)
	}
	for k, name := range names { // drawn last, as above
		out.Kernels[k].Slack = estimate(byKernel[name].slack, opt)
	}
	if len(attributed) > 0 { // and these after
		out.Attributed = estimate(attributed, opt)
		out.Tracks = trackSpreads(tracks, opt)
	}
	return out, nil
}

// tunedFor returns the changes of tuned that apply to a profile's row: a
// kernel's, or for a kernel split by problem those of its problem (or of
// every problem).
func tunedFor(tuned map[string][]Change, id ident, split map[string]bool) ([]Change, bool) {
	ch, ok := tuned[id.kernel]
	if !ok || !split[id.kernel] {
		return ch, ok
	}
	var out []Change
	for _, c := range ch {
		if c.Problem == "" || c.Problem == id.problem {
			out = append(out, c)
		}
	}
	return out, len(out) > 0
}

// Bootstrap summarises any sample as Spread summarises a kernel's figures:
// median, min, max, quartiles and a 95% bootstrap interval of the median
// drawn with opt.RNG (for example an experiment's measured changes).
func Bootstrap(v []float64, opt SpreadOptions) (Estimate, error) {
	switch {
	case opt.RNG == nil:
		return Estimate{}, errors.New("bootstrap: no RNG")
	case len(v) == 0:
		return Estimate{}, errors.New("bootstrap: no values")
	}
	if opt.Resamples <= 0 {
		opt.Resamples = 1000
	}
	return estimate(v, opt), nil
}

// Iterations splits spans by Iteration, ascending, keeping only the
// dependencies inside each iteration, as Spread does.
func Iterations(spans []Span) [][]Span { return byIteration(spans) }

func iterOf(spans []Span) int {
	if len(spans) == 0 {
		return 0
	}
	return spans[0].Iteration
}

// byIteration splits spans by Iteration (ascending), keeping only the
// dependencies inside each iteration.
func byIteration(spans []Span) [][]Span {
	iter := map[uint64]int{}
	groups := map[int][]Span{}
	for _, s := range spans {
		iter[s.ID] = s.Iteration
	}
	for _, s := range spans {
		var deps []uint64
		for _, d := range s.Deps {
			if iter[d] == s.Iteration {
				deps = append(deps, d)
			}
		}
		s.Deps = deps
		groups[s.Iteration] = append(groups[s.Iteration], s)
	}
	keys := make([]int, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([][]Span, len(keys))
	for k, it := range keys {
		out[k] = groups[it]
	}
	return out
}

func estimate(v []float64, opt SpreadOptions) Estimate {
	sorted := slices.Clone(v)
	slices.Sort(sorted)
	e := Estimate{N: len(v), Min: sorted[0], Max: sorted[len(v)-1],
		Q1: quantile(sorted, 0.25), Median: quantile(sorted, 0.5), Q3: quantile(sorted, 0.75)}
	meds := make([]float64, opt.Resamples)
	count := make([]int, len(v))
	for r := range meds {
		// A resample is a multiset of ranks into sorted: count them
		// instead of sorting the resample.
		clear(count)
		for range v {
			count[opt.RNG.IntN(len(v))]++
		}
		meds[r] = medianOfCounts(sorted, count)
	}
	slices.Sort(meds)
	e.Lo, e.Hi = quantile(meds, 0.025), quantile(meds, 0.975)
	return e
}

// medianOfCounts is the median of the multiset holding sorted[i] count[i]
// times, interpolated as quantile does.
func medianOfCounts(sorted []float64, count []int) float64 {
	n := 0
	for _, c := range count {
		n += c
	}
	lo, hi := (n-1)/2, n/2 // ranks of the middle order statistics
	var a, b float64
	seen := 0
	for i, c := range count {
		if seen <= lo && lo < seen+c {
			a = sorted[i]
		}
		if seen <= hi && hi < seen+c {
			b = sorted[i]
			break
		}
		seen += c
	}
	return a + 0.5*(b-a)
}

// quantile of sorted values, interpolating linearly between order
// statistics (Hyndman and Fan's type 7, R's default).
func quantile(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	lo := int(h)
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}
