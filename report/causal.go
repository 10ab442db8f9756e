package report

import (
	"fmt"
	"strings"

	"github.com/quasim/quasim/api"
)

// causalSection writes each declared pipeline's causal profile: per
// kernel its share of the end-to-end time, its time on the critical path,
// its influence, the predicted gain at its tuned time and the experiment's
// check, each the median over the recorded iterations with its 95%
// interval; and Coz's virtual-speedup curves.
func causalSection(b *strings.Builder, in Input) {
	b.WriteString(`<section class="view causal" id="causal"><h2>Causal influence</h2>`)
	defer b.WriteString(`</section>`)
	if len(in.Pipelines) == 0 {
		b.WriteString(empty("No pipelines declared: a pipeline file in the kernels directory (or the builtin pipeline, declared when the builtin kernels are tuned) says which kernels run together; runtimes post their spans and quasimd profiles them."))
		return
	}
	byName := map[string]api.Causal{}
	for _, c := range in.Causal {
		byName[c.Pipeline] = c
	}
	for i, p := range in.Pipelines {
		fmt.Fprintf(b, `<h3>%s</h3>`, esc(p.Name))
		c, ok := byName[p.Name]
		switch {
		case !ok:
			why := in.CausalErrors[p.Name]
			if why == "" {
				why = "not fetched"
			}
			b.WriteString(empty("No profile: %s.", why))
			continue
		case c.Iterations == 0:
			b.WriteString(empty("No spans recorded for this pipeline yet: nothing to profile."))
			continue
		}
		fmt.Fprintf(b, `<p class="meta">%d iterations, %d spans; end to end %s ms (median; 95%% interval %s–%s)</p>`,
			c.Iterations, c.Spans, num(c.EndToEnd.Median/1e6), num(c.EndToEnd.Lo/1e6), num(c.EndToEnd.Hi/1e6))
		b.WriteString(`<table class="plain"><thead><tr><th>kernel</th><th>share of time</th><th>on the critical path</th><th>influence</th><th>gain if tuned</th><th>measured check</th></tr></thead><tbody>`)
		pct := func(e api.Estimate) string {
			return fmt.Sprintf("%s%% <span class=\"ci\">[%s, %s]</span>", num(100*e.Median), num(100*e.Lo), num(100*e.Hi))
		}
		for _, k := range c.Kernels {
			gain := "–"
			if k.Gain != nil {
				gain = pct(*k.Gain)
			} else if k.TunedNote != "" {
				gain = `<span class="ci">` + esc(k.TunedNote) + `</span>`
			}
			check := "–"
			if m := k.Measured; m != nil {
				check = fmt.Sprintf("%s: predicted %s%%, measured %s (%d runs)", esc(m.Experiment), num(100*m.Predicted), pct(m.Measured), m.Runs)
			}
			fmt.Fprintf(b, `<tr><td>%s</td><td>%s</td><td>%s</td><td>%s <span class="ci">[%s, %s]</span></td><td>%s</td><td>%s</td></tr>`,
				esc(strings.TrimSuffix(k.Kernel+" @ "+k.Problem, " @ ")), pct(k.Share), pct(k.Critical), num(k.Influence.Median), num(k.Influence.Lo), num(k.Influence.Hi), gain, check)
		}
		b.WriteString(`</tbody></table>`)
		b.WriteString(causalCurves(fmt.Sprintf("causal-%d", i+1), c))
	}
}

// causalCurves draws each kernel's virtual-speedup curve: end-to-end
// percent saved against the kernel's percent faster.
func causalCurves(id string, c api.Causal) string {
	hi := 0.0
	n := 0
	for _, k := range c.Kernels {
		for _, e := range k.Curve {
			hi = max(hi, 100*e.Median)
		}
		n = max(n, len(k.Curve))
	}
	if n < 2 || c.CurveStep <= 0 {
		return empty("No speedup curves.")
	}
	p := newPlot(id, "virtual speedup", 860, 320, newScale(0, 100*c.CurveStep*float64(n-1), false, 0, 0), newScale(0, max(hi, 1), false, 0, 0))
	p.axes("kernel speedup (% of its time saved)", "end-to-end time saved (%)")
	for i, k := range c.Kernels {
		if len(k.Curve) == 0 {
			continue
		}
		xs, ys := make([]float64, len(k.Curve)), make([]float64, len(k.Curve))
		for j, e := range k.Curve {
			xs[j], ys[j] = 100*c.CurveStep*float64(j), 100*e.Median
		}
		col := memberColor(i)
		p.begin(k.Kernel, col, "line")
		p.polyline(xs, ys, col, 2, false, "")
		p.dots(xs, ys, nil, col, 2.5)
		p.end()
	}
	return p.svg()
}
