package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
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
// the roofs min(peak, bandwidth × intensity) for all threads and for one
// from memory, and for all threads from each cache level the daemon
// measured. Each job is placed against the roof of the smallest level its
// working set fits in (roofFor), named in the table, which says how close
// its best trial came, in numbers.
func rooflineSection(b *strings.Builder, entries []entry, c *api.Ceilings, device string) {
	b.WriteString(`<section class="view roofline" id="roofline"><h2>Roofline</h2>`)
	defer b.WriteString(`</section>`)
	type row struct {
		e      entry
		points []rooflinePoint
		best   rooflinePoint
		roof   jobRoof
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
	var hidden []string
	for i := range rows {
		r := &rows[i]
		var over []rooflinePoint
		r.roof, over = placeRoof(c, r.e.j.work.Bytes, r.points)
		if len(over) > 0 {
			// Above every roof measured: drawn, they would sit above the
			// roof they are placed against.
			kept := r.points[:0]
			for _, p := range r.points {
				if !slices.Contains(over, p) {
					kept = append(kept, p)
				}
			}
			r.points = kept
			hidden = append(hidden, fmt.Sprintf("%s %s: %d of its trials (best %s GFLOP/s)", r.e.j.kernel, r.e.j.problem, len(over), num(slices.MaxFunc(over, func(a, b rooflinePoint) int { return cmp.Compare(a.gflops, b.gflops) }).gflops)))
		}
		r.best = rooflinePoint{}
		for _, p := range r.points {
			if p.gflops > r.best.gflops {
				r.best = p
			}
		}
	}
	rows = slices.DeleteFunc(rows, func(r row) bool { return len(r.points) == 0 })
	levels := roofLevels(c)
	fmt.Fprintf(b, `<p class="meta">Ceilings of %s measured by quasimd (%s): float32 FMA peak %s GFLOP/s on %d threads, %s on one; streaming copy %s GB/s from memory`,
		esc(device), esc(c.MeasuredAt.UTC().Format("2006-01-02 15:04")), num(c.GFLOPS), c.Threads, num(c.GFLOPSThread), num(c.BandwidthGBs))
	for _, l := range levels {
		fmt.Fprintf(b, `, %s GB/s in %s (%s)`, num(l.BandwidthGBs), esc(l.Name), esc(bytesText(float64(l.Bytes))))
	}
	fmt.Fprintf(b, `. %s</p>`, esc(c.How))
	if len(levels) > 0 && c.LevelsNote != "" {
		fmt.Fprintf(b, `<p class="note roof-note">%s.</p>`, esc(c.LevelsNote))
	}
	if len(levels) == 0 {
		why := "the daemon measured none (a record from before quasim measured them; it measures again at its next start)"
		if c.LevelsNote != "" {
			why = c.LevelsNote
		}
		b.WriteString(empty("No per-level roofs: %s. Every job is placed against the memory roof, which a working set that fits in a cache can pass.", why))
	}
	if len(hidden) > 0 {
		b.WriteString(`<p class="flag roof-hidden">Not drawn, above every roof measured on this machine (the roofs were measured while it was busier, or the kernel reuses data in registers the copy probe cannot): ` + esc(strings.Join(hidden, "; ")) + `.</p>`)
	}
	if len(rows) == 0 {
		b.WriteString(empty("No job with known work has a valid trial under the roofs: the roofline places the builtin kernels (their flops and bytes per problem are known); other evaluators do not report them."))
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
	// Show the ridge points (peak / bandwidth) too, the fastest level's
	// the leftmost.
	ridge := c.GFLOPS / c.BandwidthGBs
	ilo, ihi = min(ilo, ridge/8, c.GFLOPSThread/c.BandwidthGBs/8), max(ihi, ridge*4)
	for _, l := range levels {
		ilo = min(ilo, c.GFLOPS/l.BandwidthGBs/4)
	}
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
	roof := func(peak, bw float64) ([]float64, []float64) {
		at := func(x float64) float64 { return max(min(peak, bw*x), ys.lo) }
		rx := []float64{xs.lo}
		if r := peak / bw; r > xs.lo && r < xs.hi {
			rx = append(rx, r)
		}
		rx = append(rx, xs.hi)
		ry := make([]float64, len(rx))
		for i, x := range rx {
			ry[i] = at(x)
		}
		return rx, ry
	}
	p.begin(fmt.Sprintf("roof, %d threads, memory %s GB/s", c.Threads, num(c.BandwidthGBs)), "#333", "line")
	rx, ry := roof(c.GFLOPS, c.BandwidthGBs)
	p.polyline(rx, ry, "#333", 2, false, "")
	p.end()
	p.begin("roof, one thread", "#888", "line")
	rx, ry = roof(c.GFLOPSThread, c.BandwidthGBs)
	p.polyline(rx, ry, "#888", 1.5, false, "6 4")
	p.end()
	for i, l := range levels {
		col := levelColors[i%len(levelColors)]
		p.begin(fmt.Sprintf("%s roof, %s GB/s (working set ≤ %s)", l.Name, num(l.BandwidthGBs), bytesText(float64(l.Bytes))), col, "line")
		rx, ry = roof(c.GFLOPS, l.BandwidthGBs)
		p.polyline(rx, ry, col, 1.5, false, "3 3")
		p.end()
	}
	for i, r := range rows {
		col := memberColor(i)
		xs, ys, ts := make([]float64, len(r.points)), make([]float64, len(r.points)), make([]string, len(r.points))
		for k, pt := range r.points {
			xs[k], ys[k], ts[k] = pt.intensity, pt.gflops, pt.title+", against the "+r.roof.name+" roof"
		}
		p.begin(r.e.j.kernel+" "+r.e.j.problem, col, "dot")
		p.dots(xs, ys, ts, col, 3)
		p.end()
	}
	b.WriteString(p.svg())
	b.WriteString(`<table class="plain roofs"><thead><tr><th>job</th><th>intensity</th><th>working set</th><th>roof</th><th>best GFLOP/s</th><th>of peak (all threads)</th><th>of peak (one thread)</th><th>of its roof at its intensity</th><th>bound by</th></tr></thead><tbody>`)
	for _, r := range rows {
		roofAt := min(c.GFLOPS, r.roof.bw*r.best.intensity)
		by := "compute"
		if r.roof.bw*r.best.intensity < c.GFLOPS {
			by = r.roof.name + " bandwidth"
		}
		fmt.Fprintf(b, `<tr data-roof="%s"><td><a href="#%s">%s %s</a></td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
			esc(r.roof.name), r.e.anchor, esc(r.e.j.kernel), esc(r.e.j.problem), num(r.best.intensity), esc(bytesText(r.e.j.work.Bytes)), esc(r.roof.text), num(r.best.gflops),
			num(r.best.gflops/c.GFLOPS), num(r.best.gflops/c.GFLOPSThread), num(r.best.gflops/roofAt), esc(by))
	}
	b.WriteString(`</tbody></table><p class="meta">Each job stands against the roof of the smallest cache level its working set (its compulsory bytes: every input read once, the output written once) fits in, that level's measured copy bandwidth, or memory's when it fits in none; a level's size is one instance as CPU 0 sees it (sysfs), so a multi-threaded kernel that splits its data may fit a level sooner than this says. Intensity counts compulsory traffic only: a config whose caches miss moves more bytes, so its real intensity is lower and its point sits right of where it belongs.</p>`)
}

// levelColors draw the cache levels' roofs.
var levelColors = []string{"#2a9d8f", "#8a5a9e", "#c77d1a", "#5d7fa3"}

// roofLevels are c's measured cache levels, smallest first.
func roofLevels(c *api.Ceilings) []api.CacheCeiling {
	var out []api.CacheCeiling
	for _, l := range c.Levels {
		if l.Bytes > 0 && l.BandwidthGBs > 0 && !math.IsInf(l.BandwidthGBs, 0) {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b api.CacheCeiling) int { return cmp.Compare(a.Bytes, b.Bytes) })
	return out
}

// jobRoof is the roof a job is placed against: the level its working set
// fits in, or memory.
type jobRoof struct {
	name string // "L2", or "memory"
	bw   float64
	text string // "L2 (512 KiB), 200 GB/s"
}

// placeRoof is the roof a job's points stand under: the roof of the
// level its working set fits in (roofFor) when that bounds them all, else
// the first faster one that does, saying so (its data is reused in a
// cache its compulsory bytes do not fit). Points above every roof are
// returned in over, placed against none.
func placeRoof(c *api.Ceilings, workingSet float64, pts []rooflinePoint) (jobRoof, []rooflinePoint) {
	home := roofFor(c, workingSet)
	cands := []jobRoof{home}
	levels := roofLevels(c)
	for i := len(levels) - 1; i >= 0; i-- { // larger levels are slower
		l := levels[i]
		if l.BandwidthGBs > home.bw {
			cands = append(cands, jobRoof{l.Name, l.BandwidthGBs, fmt.Sprintf("%s (%s), %s GB/s", l.Name, bytesText(float64(l.Bytes)), num(l.BandwidthGBs))})
		}
	}
	slices.SortStableFunc(cands[1:], func(a, b jobRoof) int { return cmp.Compare(a.bw, b.bw) })
	under := func(r jobRoof, p rooflinePoint) bool { return p.gflops <= min(c.GFLOPS, r.bw*p.intensity) }
	for _, r := range cands {
		if !slices.ContainsFunc(pts, func(p rooflinePoint) bool { return !under(r, p) }) {
			if r.name != home.name {
				r.text += fmt.Sprintf("; its trials pass the %s roof its working set alone would give: data reused in %s", home.name, r.name)
			}
			return r, nil
		}
	}
	top := cands[len(cands)-1]
	var over []rooflinePoint
	for _, p := range pts {
		if !under(top, p) {
			over = append(over, p)
		}
	}
	if top.name != home.name {
		top.text += fmt.Sprintf("; its trials pass the %s roof its working set alone would give: data reused in %s", home.name, top.name)
	}
	return top, over
}

// roofFor picks the smallest level of c that holds workingSet bytes.
func roofFor(c *api.Ceilings, workingSet float64) jobRoof {
	for _, l := range roofLevels(c) {
		if workingSet <= float64(l.Bytes) {
			return jobRoof{l.Name, l.BandwidthGBs, fmt.Sprintf("%s (%s), %s GB/s", l.Name, bytesText(float64(l.Bytes)), num(l.BandwidthGBs))}
		}
	}
	return jobRoof{"memory", c.BandwidthGBs, fmt.Sprintf("memory, %s GB/s", num(c.BandwidthGBs))}
}

// bytesText is a size in KiB, MiB or GiB.
func bytesText(v float64) string {
	switch {
	case v >= 1<<30:
		return num(v/(1<<30)) + " GiB"
	case v >= 1<<20:
		return num(v/(1<<20)) + " MiB"
	case v >= 1<<10:
		return num(v/(1<<10)) + " KiB"
	}
	return num(v) + " B"
}
