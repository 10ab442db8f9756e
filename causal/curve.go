package causal

import (
	"cmp"
	"slices"
)

// CurveStep and CurveSteps give a Curve's kernel speedups: 0, 5, ..., 50%,
// as Coz plots them.
const (
	CurveStep  = 0.05
	CurveSteps = 11
)

// Point is one point of a virtual-speedup curve: the kernel made
// KernelSpeedup faster (a fraction of its time) saves Speedup of the
// end-to-end time (a fraction too).
type Point struct {
	KernelSpeedup float64 `json:"kernel_speedup"`
	Speedup       float64 `json:"speedup"`
}

// KernelProfile is what the model says about one kernel of one graph:
// of its spans at Problem when the kernel is split by problem (see
// SplitKernels), else of all its spans.
type KernelProfile struct {
	Kernel  string `json:"kernel"`
	Problem string `json:"problem,omitempty"` // set when the kernel is split by problem
	Spans   int    `json:"spans"`
	Time    int64  `json:"time_ns"` // its spans' total duration
	// Share is the fraction of end-to-end time during which its spans
	// run (two at once count once, so it is never above 1).
	Share        float64 `json:"share"`
	CriticalTime int64   `json:"critical_time_ns"` // its time on the critical path
	Slack        int64   `json:"slack_ns"`         // the least slack of its spans
	Curve        []Point `json:"curve"`
	// Influence is the curve's slope over its first step: the fraction of
	// end-to-end time saved per fraction of the kernel's time saved, near 0.
	Influence float64 `json:"influence"`
}

// SplitKernels returns the kernels that two or more stages run: with two
// or more problems, on two or more streams (a pipeline's two
// convolutions, say). The profile gives each of their problems a row of
// its own, so a kernel's rows are its stages rather than their sum.
func SplitKernels(spans []Span) map[string]bool {
	type seen struct{ problems, tracks map[string]bool }
	by := map[string]*seen{}
	for _, s := range spans {
		if s.Boundary {
			continue
		}
		k := by[s.Kernel]
		if k == nil {
			k = &seen{map[string]bool{}, map[string]bool{}}
			by[s.Kernel] = k
		}
		k.problems[s.Problem] = true
		k.tracks[s.Device+"\x00"+s.Stream] = true
	}
	out := map[string]bool{}
	for name, k := range by {
		if len(k.problems) > 1 && len(k.tracks) > 1 {
			out[name] = true
		}
	}
	return out
}

// ident is a profile's row: a kernel, or a kernel at one problem.
type ident struct{ kernel, problem string }

func (a ident) compare(b ident) int {
	return cmp.Or(cmp.Compare(a.kernel, b.kernel), cmp.Compare(a.problem, b.problem))
}

// idents numbers the rows of a profile, sorted by kernel then problem,
// and gives each span its row.
func (g *Graph) idents(split map[string]bool) ([]ident, []int32) {
	row := func(s Span) ident {
		if split[s.Kernel] {
			return ident{s.Kernel, s.Problem}
		}
		return ident{kernel: s.Kernel}
	}
	index := map[ident]int32{}
	var ids []ident
	for i, s := range g.spans {
		if id := row(s); !s.Boundary && g.reaches(i) && !hasKey(index, id) {
			index[id] = 0
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, ident.compare)
	for k, id := range ids {
		index[id] = int32(k)
	}
	of := make([]int32, len(g.spans))
	for i, s := range g.spans {
		of[i] = -1 // a boundary is no row, nor a span that cannot move the end
		if !s.Boundary && g.reaches(i) {
			of[i] = index[row(s)]
		}
	}
	return ids, of
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

// Profile returns one KernelProfile per kernel, or per kernel and problem
// for the kernels SplitKernels gives, sorted by kernel then problem.
func (g *Graph) Profile() []KernelProfile { return g.profile(SplitKernels(g.spans)) }

func (g *Graph) profile(split map[string]bool) []KernelProfile {
	ids, of := g.idents(split)
	out := make([]KernelProfile, len(ids))
	for k, id := range ids {
		out[k] = KernelProfile{Kernel: id.kernel, Problem: id.problem, Slack: -1}
	}
	slack := g.Slack()
	busy := make([][][2]int64, len(ids))
	for i, k := range of {
		if k < 0 {
			continue
		}
		p := &out[k]
		p.Spans++
		p.Time += g.dur[i]
		if p.Slack < 0 || slack[i] < p.Slack {
			p.Slack = slack[i]
		}
		busy[k] = append(busy[k], [2]int64{g.spans[i].Start, g.spans[i].End})
	}
	for _, i := range g.CriticalPath() {
		if of[i] >= 0 {
			out[of[i]].CriticalTime += g.dur[i]
		}
	}
	dur := make([]int64, len(g.dur))
	end := make([]int64, len(g.dur))
	for k := range out {
		p := &out[k]
		if g.base > 0 {
			p.Share = float64(union(busy[k])) / float64(g.base)
		}
		p.Curve = make([]Point, CurveSteps)
		for s := range CurveSteps {
			x := float64(s) * CurveStep
			copy(dur, g.dur)
			c := Change{Scale: 1 - x}
			for i, kk := range of {
				if int(kk) == k {
					dur[i] = c.apply(dur[i])
				}
			}
			p.Curve[s] = Point{KernelSpeedup: x, Speedup: g.speedup(g.Replay(dur, nil, end))}
		}
		p.Influence = p.Curve[1].Speedup / CurveStep
	}
	// A kernel whose spans tie with the critical path (slack within the
	// trace's noise) is on it, but when another path binds within that
	// noise the curve's first step reads almost 0: its influence is then
	// the share of the iteration those spans take (the slope at 0).
	tie := min(NearZeroSlack, g.base/100)
	tied := make([]int64, len(out))
	for i, k := range of {
		if k >= 0 && slack[i] <= tie {
			tied[k] += g.dur[i]
		}
	}
	for k := range out {
		if g.base > 0 && out[k].Curve[1].Speedup*float64(g.base) <= float64(tie) {
			out[k].Influence = max(out[k].Influence, float64(tied[k])/float64(g.base))
		}
	}
	return out
}

// NearZeroSlack is the most slack (ns) a span may have, and at most 1% of
// its iteration, to tie with the critical path (a gap of MinGap is a
// trace's noise).
const NearZeroSlack = MinGap

// union is the length of the union of intervals [start, end).
func union(iv [][2]int64) int64 {
	slices.SortFunc(iv, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var total, hi int64
	for k, v := range iv {
		if k == 0 || v[0] > hi {
			total += v[1] - v[0]
			hi = v[1]
			continue
		}
		if v[1] > hi {
			total += v[1] - hi
			hi = v[1]
		}
	}
	return total
}

// speedup is the fraction of the recorded end-to-end time that t saves.
func (g *Graph) speedup(t int64) float64 {
	if g.base == 0 {
		return 0
	}
	return float64(g.base-t) / float64(g.base)
}
