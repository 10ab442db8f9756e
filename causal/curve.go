package causal

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

// KernelProfile is what the model says about one kernel of one graph.
type KernelProfile struct {
	Kernel       string  `json:"kernel"`
	Spans        int     `json:"spans"`
	Time         int64   `json:"time_ns"`          // its spans' total duration
	Share        float64 `json:"share"`            // Time / end-to-end time
	CriticalTime int64   `json:"critical_time_ns"` // its time on the critical path
	Slack        int64   `json:"slack_ns"`         // the least slack of its spans
	Curve        []Point `json:"curve"`
	// Influence is the curve's slope over its first step: the fraction of
	// end-to-end time saved per fraction of the kernel's time saved, near 0.
	Influence float64 `json:"influence"`
}

// Profile returns one KernelProfile per kernel, in Kernels order.
func (g *Graph) Profile() []KernelProfile {
	out := make([]KernelProfile, len(g.kernels))
	for k, name := range g.kernels {
		out[k] = KernelProfile{Kernel: name, Slack: -1}
	}
	slack := g.Slack()
	for i, k := range g.kernel {
		p := &out[k]
		p.Spans++
		p.Time += g.dur[i]
		if p.Slack < 0 || slack[i] < p.Slack {
			p.Slack = slack[i]
		}
	}
	for _, i := range g.CriticalPath() {
		out[g.kernel[i]].CriticalTime += g.dur[i]
	}
	dur := make([]int64, len(g.dur))
	end := make([]int64, len(g.dur))
	for k := range out {
		p := &out[k]
		if g.base > 0 {
			p.Share = float64(p.Time) / float64(g.base)
		}
		p.Curve = make([]Point, CurveSteps)
		for s := range CurveSteps {
			x := float64(s) * CurveStep
			copy(dur, g.dur)
			c := Change{Scale: 1 - x}
			for i, kk := range g.kernel {
				if int(kk) == k {
					dur[i] = c.apply(dur[i])
				}
			}
			p.Curve[s] = Point{KernelSpeedup: x, Speedup: g.speedup(g.Replay(dur, nil, end))}
		}
		p.Influence = p.Curve[1].Speedup / CurveStep
	}
	return out
}

// speedup is the fraction of the recorded end-to-end time that t saves.
func (g *Graph) speedup(t int64) float64 {
	if g.base == 0 {
		return 0
	}
	return float64(g.base-t) / float64(g.base)
}
