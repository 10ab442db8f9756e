package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/quasim/quasim/api"
)

// Colours: series, marks and trial statuses.
const (
	colTrial   = "#8aa6c8"
	colBest    = "#1f4e8c"
	colDefault = "#b23a48"
	colServed  = "#1b8a3a"
	colFailed  = "#d9822b"
	colFront   = "#7b3fa0"
)

var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

func memberColor(i int) string { return palette[i%len(palette)] }

// empty is an honest empty state in place of a chart.
func empty(format string, a ...any) string {
	return `<p class="empty">` + esc(fmt.Sprintf(format, a...)) + `</p>`
}

// statusCounts is "compile 3, runtime 2", most frequent first.
func statusCounts(trials []api.Trial) string {
	n := map[string]int{}
	for _, t := range trials {
		s := t.Status
		if s == "" {
			s = "unknown"
		}
		n[s]++
	}
	keys := slices.Collect(maps.Keys(n))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(n[b], n[a]), strings.Compare(a, b)) })
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+" "+strconv.Itoa(n[k]))
	}
	return strings.Join(parts, ", ")
}

// convergenceChart draws best-so-far time against evaluations, every
// valid trial, failed evaluations along the bottom, the default's time,
// the served config and where each cycle began.
func convergenceChart(id string, j *job, c convergence) string {
	if c.n == 0 {
		return empty("No trials stored for this job yet: nothing to draw.")
	}
	if c.valid == 0 {
		return empty("All %d trials failed (%s): no time to draw.", c.n, statusCounts(j.trials))
	}
	lo, hi := c.bestMS, c.bestMS
	for _, t := range j.trials {
		if valid(t) {
			hi = max(hi, t.TimeMS)
		}
	}
	defMS := 0.0
	if j.served != nil && j.served.DefaultMS > 0 {
		defMS = j.served.DefaultMS
		lo, hi = min(lo, defMS), max(hi, defMS)
	}
	if j.served != nil && j.served.TimeMS > 0 {
		lo, hi = min(lo, j.served.TimeMS), max(hi, j.served.TimeMS)
	}
	xs := newScale(1, float64(max(c.n, 2)), false, 0, 0)
	p := newPlot(id, "convergence", 860, 340, xs, newScale(lo, hi, true, 0, 0))
	p.axes("evaluation (all cycles, in order)", "time (ms)")
	// Cycle boundaries.
	ids := slices.Sorted(maps.Keys(c.cycleStart))
	for i, cy := range ids {
		px := p.x.at(float64(c.cycleStart[cy]))
		fmt.Fprintf(&p.b, `<line class="cycle" x1="%s" x2="%s" y1="%s" y2="%s"/>`, f1(px), f1(px), f1(p.y.b), f1(p.y.a))
		if len(ids) <= 30 || i%(len(ids)/30+1) == 0 {
			p.text(px+2, p.y.b+10, "start", "cyclelabel", "c"+strconv.Itoa(cy))
		}
	}
	var vx, vy []float64
	var titles []string
	var fx []float64
	for i, t := range j.trials {
		if valid(t) {
			vx, vy = append(vx, float64(i+1)), append(vy, t.TimeMS)
			titles = append(titles, fmt.Sprintf("#%d %s: %s ms (%s)", i+1, t.Key, num(t.TimeMS), cycleName(t.Cycle)))
		} else {
			fx = append(fx, float64(i+1))
		}
	}
	p.begin("trial", colTrial, "dot")
	p.dots(vx, vy, titles, colTrial, 2.5)
	p.end()
	if len(fx) > 0 {
		p.begin("failed", colFailed, "box")
		var d strings.Builder
		for _, x := range fx {
			fmt.Fprintf(&d, "M%s %sv-6", f1(p.x.at(x)), f1(p.y.a))
		}
		fmt.Fprintf(&p.b, `<path d="%s" stroke="%s" stroke-width="1.2" fill="none"/>`, d.String(), colFailed)
		p.end()
	}
	sx, sy := []float64{}, []float64{}
	for _, s := range c.steps {
		sx, sy = append(sx, float64(s.Evals)), append(sy, s.BestMS)
	}
	sx, sy = append(sx, float64(c.n)), append(sy, c.bestMS)
	p.begin("best so far", colBest, "line")
	p.polyline(sx, sy, colBest, 2.5, true, "")
	p.dots([]float64{float64(c.n)}, []float64{c.bestMS}, []string{"best known " + c.bestKey + ": " + num(c.bestMS) + " ms"}, colBest, 3.5)
	p.end()
	if defMS > 0 {
		p.begin("default", colDefault, "line")
		p.hline(defMS, colDefault, "default "+num(defMS)+" ms")
		p.end()
	}
	if s := j.served; s != nil && s.TimeMS > 0 {
		at, ok := c.firstAt[s.Key]
		if !ok {
			at = c.n
		}
		p.begin("served", colServed, "ring")
		p.marker(float64(at), s.TimeMS, colServed, "served "+num(s.TimeMS)+" ms")
		p.end()
	}
	return p.svg()
}

func cycleName(c int) string {
	if c == 0 {
		return "imported"
	}
	return "cycle " + strconv.Itoa(c)
}

// maxPortfolioCycles bounds the bars of the portfolio chart: the latest.
const maxPortfolioCycles = 40

// portfolioChart draws, per cycle, how many evaluations each portfolio
// member proposed, as stacked bars.
func portfolioChart(id string, j *job) string {
	var cs []api.Cycle
	for _, c := range j.cycles {
		if len(c.Allocation) > 0 {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		switch {
		case len(j.cycles) == 0 && len(j.trials) > 0:
			return empty("No tuning cycles: this job's trials were imported or came from elsewhere, so no portfolio proposed them.")
		case len(j.cycles) == 0:
			return empty("No tuning cycles have run for this job yet.")
		}
		return empty("%d cycles ran, none with a portfolio allocation recorded (strategy %s).", len(j.cycles), j.cycles[len(j.cycles)-1].Strategy)
	}
	note := ""
	if len(cs) > maxPortfolioCycles {
		note = fmt.Sprintf(`<p class="note">The latest %d of %d cycles.</p>`, maxPortfolioCycles, len(cs))
		cs = cs[len(cs)-maxPortfolioCycles:]
	}
	ms := members(cs)
	most := 0
	for _, c := range cs {
		s := 0
		for _, n := range c.Allocation {
			s += n
		}
		most = max(most, s)
	}
	const band = 22.0
	h := padTop + padBottom + band*float64(len(cs))
	p := newPlot(id, "portfolio", 860, h, newScale(0, float64(most), false, 0, 0), newScale(0, 1, false, 0, 0))
	p.x.lo = 0
	// Axes by hand: the y axis is one band per cycle.
	x0, x1 := p.x.a, p.x.b
	fmt.Fprintf(&p.b, `<rect class="frame" x="%s" y="%s" width="%s" height="%s"/>`, f1(x0), f1(float64(padTop)), f1(x1-x0), f1(band*float64(len(cs))))
	for _, t := range p.x.ticks() {
		px := p.x.at(t)
		fmt.Fprintf(&p.b, `<line class="grid" x1="%s" x2="%s" y1="%d" y2="%s"/>`, f1(px), f1(px), padTop, f1(h-padBottom))
		p.text(px, h-padBottom+14, "middle", "tick", num(t))
	}
	p.text((x0+x1)/2, h-8, "middle", "axis", "evaluations proposed")
	for i, c := range cs {
		p.text(x0-4, padTop+band*float64(i)+15, "end", "tick", "c"+strconv.Itoa(c.ID))
	}
	for mi, m := range ms {
		p.begin(m, memberColor(mi), "box")
		for i, c := range cs {
			before := 0
			for _, o := range ms[:mi] {
				before += c.Allocation[o]
			}
			n := c.Allocation[m]
			if n == 0 {
				continue
			}
			xa, xb := p.x.at(float64(before)), p.x.at(float64(before+n))
			p.rect(xa, padTop+band*float64(i)+3, xb-xa, band-6, memberColor(mi),
				fmt.Sprintf("cycle %d: %s proposed %d", c.ID, m, n))
		}
		p.end()
	}
	return note + p.svg()
}

// importanceChart draws each parameter's η² as a horizontal bar.
func importanceChart(id string, es []effect) string {
	const band = 20.0
	h := padTop + padBottom + band*float64(len(es))
	p := newPlot(id, "parameter importance", 860, h, newScale(0, 1, false, 0, 0), newScale(0, 1, false, 0, 0))
	p.x.lo, p.x.hi = 0, 1
	p.x.a = 180
	x0, x1 := p.x.a, p.x.b
	fmt.Fprintf(&p.b, `<rect class="frame" x="%s" y="%d" width="%s" height="%s"/>`, f1(x0), padTop, f1(x1-x0), f1(band*float64(len(es))))
	for _, t := range p.x.ticks() {
		px := p.x.at(t)
		fmt.Fprintf(&p.b, `<line class="grid" x1="%s" x2="%s" y1="%d" y2="%s"/>`, f1(px), f1(px), padTop, f1(h-padBottom))
		p.text(px, h-padBottom+14, "middle", "tick", num(t))
	}
	p.text((x0+x1)/2, h-8, "middle", "axis", "share of the variance of log time explained by the parameter alone (η²)")
	p.begin("η²", colBest, "box")
	for i, e := range es {
		y := padTop + band*float64(i)
		p.text(x0-6, y+14, "end", "tick", e.Param)
		p.rect(x0, y+3, p.x.at(e.Importance)-x0, band-6, colBest, fmt.Sprintf("%s: η² = %.3f over %d values", e.Param, e.Importance, len(e.Levels)))
		p.text(p.x.at(e.Importance)+4, y+14, "start", "tick", strconv.FormatFloat(e.Importance, 'f', 3, 64))
	}
	p.end()
	return p.svg()
}

// effectChart draws one parameter's values against the median and best
// time of the valid trials that had them.
func effectChart(id string, e effect) string {
	lo, hi := e.Levels[0].MinMS, e.Levels[0].MedianMS
	for _, l := range e.Levels {
		lo, hi = min(lo, l.MinMS), max(hi, l.MedianMS)
	}
	w := max(300, padLeft+padRight+34*float64(len(e.Levels)))
	p := newPlot(id, "effect of "+e.Param, w, 230, newScale(0, 1, false, 0, 0), newScale(lo, hi, true, 0, 0))
	if !p.y.log {
		p.y.lo = 0 // bars start at zero
	}
	x0, x1 := p.x.a, p.x.b
	bw := (x1 - x0) / float64(len(e.Levels))
	fmt.Fprintf(&p.b, `<rect class="frame" x="%s" y="%s" width="%s" height="%s"/>`, f1(x0), f1(p.y.b), f1(x1-x0), f1(p.y.a-p.y.b))
	for _, t := range p.y.ticks() {
		py := p.y.at(t)
		fmt.Fprintf(&p.b, `<line class="grid" x1="%s" x2="%s" y1="%s" y2="%s"/>`, f1(x0), f1(x1), f1(py), f1(py))
		p.text(x0-4, py+4, "end", "tick", num(t))
	}
	for i, l := range e.Levels {
		cx := x0 + bw*(float64(i)+0.5)
		v := l.Value
		if len(v) > 8 {
			v = v[:7] + "…"
		}
		p.text(cx, p.y.a+14, "middle", "tick", v)
	}
	p.text((x0+x1)/2, p.h-8, "middle", "axis", fmt.Sprintf("%s (η² = %.3f)", e.Param, e.Importance))
	fmt.Fprintf(&p.b, `<text class="axis" transform="translate(14 %s) rotate(-90)" text-anchor="middle">time (ms)</text>`, f1((p.y.a+p.y.b)/2))
	p.begin("median", colTrial, "box")
	for i, l := range e.Levels {
		cx := x0 + bw*(float64(i)+0.5)
		top := p.y.at(l.MedianMS)
		p.rect(cx-bw*0.3, top, bw*0.6, p.y.a-top, colTrial, fmt.Sprintf("%s = %s: median %s ms over %d trials", e.Param, l.Value, num(l.MedianMS), l.N))
	}
	p.end()
	p.begin("best", colBest, "dot")
	for i, l := range e.Levels {
		cx := x0 + bw*(float64(i)+0.5)
		fmt.Fprintf(&p.b, `<circle cx="%s" cy="%s" r="4" fill="%s"><title>%s</title></circle>`, f1(cx), f1(p.y.at(l.MinMS)), colBest,
			esc(fmt.Sprintf("%s = %s: best %s ms", e.Param, l.Value, num(l.MinMS))))
	}
	p.end()
	return p.svg()
}

// paretoChart draws the (time, energy) of valid trials with energy, the
// Pareto front and the certified configs among them.
func paretoChart(id string, j *job) string {
	all, front := paretoFront(j.trials)
	if len(all) == 0 {
		if len(j.trials) == 0 {
			return empty("No trials: no (time, energy) points.")
		}
		return empty("No valid trial of this job carries an energy reading (the device or evaluator gave none), so there is no (time, energy) front.")
	}
	tlo, thi, elo, ehi := all[0].TimeMS, all[0].TimeMS, all[0].EnergyMJ, all[0].EnergyMJ
	for _, q := range all {
		tlo, thi = min(tlo, q.TimeMS), max(thi, q.TimeMS)
		elo, ehi = min(elo, q.EnergyMJ), max(ehi, q.EnergyMJ)
	}
	p := newPlot(id, "pareto", 860, 340, newScale(tlo, thi, true, 0, 0), newScale(elo, ehi, true, 0, 0))
	p.axes("time (ms)", "energy per run (mJ)")
	xs, ys, titles := []float64{}, []float64{}, []string{}
	for _, q := range all {
		xs, ys = append(xs, q.TimeMS), append(ys, q.EnergyMJ)
		titles = append(titles, fmt.Sprintf("%s: %s ms, %s mJ", q.Key, num(q.TimeMS), num(q.EnergyMJ)))
	}
	p.begin("trial", colTrial, "dot")
	p.dots(xs, ys, titles, colTrial, 2.5)
	p.end()
	fx, fy, ft := []float64{}, []float64{}, []string{}
	for _, q := range front {
		fx, fy = append(fx, q.TimeMS), append(fy, q.EnergyMJ)
		ft = append(ft, fmt.Sprintf("front: %s: %s ms, %s mJ", q.Key, num(q.TimeMS), num(q.EnergyMJ)))
	}
	p.begin("Pareto front", colFront, "line")
	p.polyline(fx, fy, colFront, 2, true, "")
	p.dots(fx, fy, ft, colFront, 3.5)
	p.end()
	certified := map[string]bool{}
	for _, c := range j.certs {
		if !c.Revoked {
			certified[c.Key] = true
		}
	}
	var cx, cy []float64
	for _, q := range all {
		if certified[q.Key] {
			cx, cy = append(cx, q.TimeMS), append(cy, q.EnergyMJ)
		}
	}
	if len(cx) > 0 {
		p.begin("certified", colServed, "ring")
		for i := range cx {
			fmt.Fprintf(&p.b, `<circle cx="%s" cy="%s" r="7" fill="none" stroke="%s" stroke-width="2.5"/>`, f1(p.x.at(cx[i])), f1(p.y.at(cy[i])), colServed)
		}
		p.end()
	}
	return p.svg()
}
