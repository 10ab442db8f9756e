package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/quasim/quasim/api"
)

// rooflinePoint is one valid trial of a job with known work.
type rooflinePoint struct {
	intensity, gflops float64
	title             string
}

// rooflineSection draws every job whose work is known (the builtin
// kernels) under the ceilings the daemon measured: achieved GFLOP/s of each
// valid trial against the job's arithmetic intensity (flops over
// compulsory bytes, so a job's trials stand on one vertical line), with
// the roofs min(peak, bandwidth × intensity) for all threads and for one.
// A table says how close each job's best trial came, in numbers.
func rooflineSection(b *strings.Builder, entries []entry, c *api.Ceilings, device string) {
	b.WriteString(`<section class="view roofline" id="roofline"><h2>Roofline</h2>`)
	defer b.WriteString(`</section>`)
	type row struct {
		e      entry
		points []rooflinePoint
		best   rooflinePoint
	}
	var rows []row
	for _, e := range entries {
		w := e.j.work
		if w == nil || !(w.Flops > 0) || !(w.Bytes > 0) {
			continue
		}
		r := row{e: e}
		for _, t := range e.j.trials {
			if t.Status != "ok" || !(t.TimeMS > 0) || math.IsInf(t.TimeMS, 0) {
				continue
			}
			p := rooflinePoint{intensity: w.Flops / w.Bytes, gflops: w.Flops / (t.TimeMS * 1e6)}
			p.title = fmt.Sprintf("%s %s: %s: %s ms, %s GFLOP/s", e.j.kernel, e.j.problem, t.Key, num(t.TimeMS), num(p.gflops))
			r.points = append(r.points, p)
			if p.gflops > r.best.gflops {
				r.best = p
			}
		}
		if len(r.points) > 0 {
			rows = append(rows, r)
		}
	}
	if c == nil || !(c.GFLOPS > 0) || !(c.GFLOPSThread > 0) || !(c.BandwidthGBs > 0) || math.IsInf(c.GFLOPS+c.GFLOPSThread+c.BandwidthGBs, 0) {
		b.WriteString(empty("No ceilings: the daemon has not measured this machine's FMA peak and copy bandwidth yet (it does once per device class, shortly after its first start, when the CPU is idle; quasimctl devices shows them)."))
		return
	}
	fmt.Fprintf(b, `<p class="meta">Ceilings of %s measured by quasimd (%s): float32 FMA peak %s GFLOP/s on %d threads, %s on one; streaming copy %s GB/s. %s</p>`,
		esc(device), esc(c.MeasuredAt.UTC().Format("2006-01-02 15:04")), num(c.GFLOPS), c.Threads, num(c.GFLOPSThread), num(c.BandwidthGBs), esc(c.How))
	if len(rows) == 0 {
		b.WriteString(empty("No job with known work has a valid trial: the roofline places the builtin kernels (their flops and bytes per problem are known); other evaluators do not report them."))
		return
	}
	ilo, ihi := math.Inf(1), math.Inf(-1)
	glo, ghi := c.GFLOPS, c.GFLOPS
	for _, r := range rows {
		for _, p := range r.points {
			ilo, ihi = min(ilo, p.intensity), max(ihi, p.intensity)
			glo, ghi = min(glo, p.gflops), max(ghi, p.gflops)
		}
	}
	// Show the ridge points (peak / bandwidth) too.
	ridge := c.GFLOPS / c.BandwidthGBs
	ilo, ihi = min(ilo, ridge/8, c.GFLOPSThread/c.BandwidthGBs/8), max(ihi, ridge*4)
	xs := newScale(ilo, ihi, true, 0, 0)
	xs.log = true
	ys := newScale(glo, ghi, true, 0, 0)
	ys.log = true
	if ys.lo <= 0 {
		ys.lo = glo / 2
	}
	p := newPlot("roofline-chart", "roofline", 860, 380, xs, ys)
	p.axes("arithmetic intensity (flop per compulsory byte)", "GFLOP/s")
	// A roof is two segments: bandwidth x intensity up to the ridge, then
	// the peak.
	roof := func(peak float64) ([]float64, []float64) {
		at := func(x float64) float64 { return max(min(peak, c.BandwidthGBs*x), ys.lo) }
		rx := []float64{xs.lo}
		if r := peak / c.BandwidthGBs; r > xs.lo && r < xs.hi {
			rx = append(rx, r)
		}
		rx = append(rx, xs.hi)
		ry := make([]float64, len(rx))
		for i, x := range rx {
			ry[i] = at(x)
		}
		return rx, ry
	}
	p.begin(fmt.Sprintf("roof, %d threads", c.Threads), "#333", "line")
	rx, ry := roof(c.GFLOPS)
	p.polyline(rx, ry, "#333", 2, false, "")
	p.end()
	p.begin("roof, one thread", "#888", "line")
	rx, ry = roof(c.GFLOPSThread)
	p.polyline(rx, ry, "#888", 1.5, false, "6 4")
	p.end()
	for i, r := range rows {
		col := memberColor(i)
		xs, ys, ts := make([]float64, len(r.points)), make([]float64, len(r.points)), make([]string, len(r.points))
		for k, pt := range r.points {
			xs[k], ys[k], ts[k] = pt.intensity, pt.gflops, pt.title
		}
		p.begin(r.e.j.kernel+" "+r.e.j.problem, col, "dot")
		p.dots(xs, ys, ts, col, 3)
		p.end()
	}
	b.WriteString(p.svg())
	b.WriteString(`<table class="plain"><thead><tr><th>job</th><th>intensity</th><th>best GFLOP/s</th><th>of peak (all threads)</th><th>of peak (one thread)</th><th>of the roof at its intensity</th><th>bound by</th></tr></thead><tbody>`)
	for _, r := range rows {
		roofAt := min(c.GFLOPS, c.BandwidthGBs*r.best.intensity)
		by := "compute"
		if c.BandwidthGBs*r.best.intensity < c.GFLOPS {
			by = "memory bandwidth"
		}
		fmt.Fprintf(b, `<tr><td><a href="#%s">%s %s</a></td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
			r.e.anchor, esc(r.e.j.kernel), esc(r.e.j.problem), num(r.best.intensity), num(r.best.gflops),
			num(r.best.gflops/c.GFLOPS), num(r.best.gflops/c.GFLOPSThread), num(r.best.gflops/roofAt), by)
	}
	b.WriteString(`</tbody></table><p class="meta">Intensity counts compulsory traffic only (every input read once, the output written once): a config whose caches miss moves more bytes, so its real intensity is lower and its point sits right of where it belongs.</p>`)
}
