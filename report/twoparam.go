package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The two-parameter views: a heat map of the two most important
// parameters (by η², effects) and parallel coordinates of every parameter
// and the time, the views optuna-dashboard's and Kernel Tuner's dashboard
// readers reach for first.

// Limits of the views: a heat map axis of more values than maxCells is
// not drawn as cells; parallel coordinates draw at most maxLines trials.
const (
	maxCells = 48
	maxLines = 2000
)

// ramp is the colour of f in [0, 1]: fast (0) dark blue through teal and
// green to yellow (1), slow; a viridis-like ramp that stays readable in
// grey.
func ramp(f float64) string {
	stops := [][3]float64{{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}
	f = min(max(f, 0), 1) * float64(len(stops)-1)
	i := min(int(f), len(stops)-2)
	t := f - float64(i)
	var c [3]int
	for k := range c {
		c[k] = int(math.Round(stops[i][k] + t*(stops[i+1][k]-stops[i][k])))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2])
}

// timeScale maps a time onto [0, 1] by its log between lo and hi.
func timeScale(lo, hi float64) func(float64) float64 {
	if !(hi > lo) {
		return func(float64) float64 { return 0 }
	}
	l, h := math.Log(lo), math.Log(hi)
	return func(v float64) float64 { return (math.Log(v) - l) / (h - l) }
}

// colorBar draws the time ramp at pixel (x, y), w wide, with its ends.
func colorBar(p *plot, x, y, w float64, lo, hi float64) {
	const n = 24
	for i := range n {
		fmt.Fprintf(&p.b, `<rect x="%s" y="%s" width="%s" height="10" fill="%s"/>`, f1(x+w*float64(i)/n), f1(y), f1(w/n+0.5), ramp(float64(i)/(n-1)))
	}
	p.text(x, y+22, "start", "tick", num(lo)+" ms (fast)")
	p.text(x+w, y+22, "end", "tick", num(hi)+" ms (slow)")
}

// trialVals is a valid trial split into its parameters' values.
type trialVals struct {
	vals []string
	ms   float64
	key  string
}

// splitTrials returns the valid trials whose keys split into params.
func splitTrials(j *job) []trialVals {
	var out []trialVals
	for _, t := range j.trials {
		if !valid(t) {
			continue
		}
		if v := splitKey(t.Key, j.params); v != nil {
			out = append(out, trialVals{v, t.TimeMS, t.Key})
		}
	}
	return out
}

// twoParamView writes the heat map and the parallel coordinates of j, or
// says why they cannot be drawn; es are j's effects, most important
// first.
func twoParamView(b *strings.Builder, a string, j *job, es []effect) {
	var two []effect
	for _, e := range es {
		if len(e.Levels) >= 2 && len(two) < 2 {
			two = append(two, e)
		}
	}
	if len(two) < 2 {
		b.WriteString(empty("The two-parameter views need two parameters whose values vary over the valid trials; this job has %d.", len(two)))
		return
	}
	ts := splitTrials(j)
	fmt.Fprintf(b, `<p class="note">The two most important parameters, %s (η² %.3f) and %s (η² %.3f): each cell is the best time measured with that pair of values, whatever the others were. Then every valid trial across all parameters, most important first, and its time.</p>`,
		esc(two[0].Param), two[0].Importance, esc(two[1].Param), two[1].Importance)
	b.WriteString(heatMap(a+"-heatmap", j, two[0], two[1], ts))
	b.WriteString(parallelCoords(a+"-parallel", j, es, ts))
}

// heatMap draws the best time of each (x, y) pair of values.
func heatMap(id string, j *job, ex, ey effect, ts []trialVals) string {
	if len(ex.Levels) > maxCells || len(ey.Levels) > maxCells {
		return empty("%s has %d values and %s %d: too many to draw as cells (at most %d a side).", ex.Param, len(ex.Levels), ey.Param, len(ey.Levels), maxCells)
	}
	ix, iy := slices.Index(j.params, ex.Param), slices.Index(j.params, ey.Param)
	type cell struct {
		best float64
		n    int
		key  string
	}
	cells := map[[2]string]*cell{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, t := range ts {
		k := [2]string{t.vals[ix], t.vals[iy]}
		c := cells[k]
		if c == nil {
			c = &cell{best: t.ms, key: t.key}
			cells[k] = c
		}
		c.n++
		if t.ms < c.best {
			c.best, c.key = t.ms, t.key
		}
	}
	for _, c := range cells {
		lo, hi = min(lo, c.best), max(hi, c.best)
	}
	nx, ny := float64(len(ex.Levels)), float64(len(ey.Levels))
	cw := min(64, 640/nx)
	ch := min(32, max(14, 360/ny))
	const left = 120.0
	w := max(420, left+cw*nx+padRight+20)
	h := padTop + ch*ny + padBottom + 40
	p := newPlot(id, "heat map of "+ex.Param+" and "+ey.Param, w, h, newScale(0, 1, false, 0, 0), newScale(0, 1, false, 0, 0))
	x0, y0 := left, float64(padTop)
	fmt.Fprintf(&p.b, `<rect class="frame" x="%s" y="%s" width="%s" height="%s"/>`, f1(x0), f1(y0), f1(cw*nx), f1(ch*ny))
	// Label every value, or every k-th where labels would collide.
	every := func(px, minPx float64) int { return max(1, int(math.Ceil(minPx/px))) }
	sx, sy := every(cw, 34), every(ch, 14)
	for i, l := range ex.Levels {
		if i%sx == 0 {
			p.text(x0+cw*(float64(i)+0.5), y0+ch*ny+14, "middle", "tick", shortValue(l.Value))
		}
	}
	for i, l := range ey.Levels {
		if i%sy == 0 {
			p.text(x0-6, y0+ch*(float64(i)+0.5)+4, "end", "tick", shortValue(l.Value))
		}
	}
	p.text(x0+cw*nx/2, y0+ch*ny+30, "middle", "axis", ex.Param)
	fmt.Fprintf(&p.b, `<text class="axis" transform="translate(14 %s) rotate(-90)" text-anchor="middle">%s</text>`, f1(y0+ch*ny/2), esc(ey.Param))
	scaleT := timeScale(lo, hi)
	var bestX, bestY float64
	p.begin("best time of the pair", ramp(0.5), "box")
	missing := 0
	for i, lx := range ex.Levels {
		for k, ly := range ey.Levels {
			c := cells[[2]string{lx.Value, ly.Value}]
			if c == nil {
				missing++
				continue
			}
			px, py := x0+cw*float64(i), y0+ch*float64(k)
			p.rect(px, py, cw, ch, ramp(scaleT(c.best)), fmt.Sprintf("%s=%s, %s=%s: best %s ms (%s) of %d trials", ex.Param, lx.Value, ey.Param, ly.Value, num(c.best), c.key, c.n))
			if c.best == lo {
				bestX, bestY = px+cw/2, py+ch/2
			}
		}
	}
	p.end()
	if missing > 0 {
		p.begin("not measured", "#eceef2", "box")
		for i, lx := range ex.Levels {
			for k, ly := range ey.Levels {
				if cells[[2]string{lx.Value, ly.Value}] == nil {
					p.rect(x0+cw*float64(i), y0+ch*float64(k), cw, ch, "#eceef2", fmt.Sprintf("%s=%s, %s=%s: no valid trial", ex.Param, lx.Value, ey.Param, ly.Value))
				}
			}
		}
		p.end()
	}
	p.begin("best", colServed, "ring")
	fmt.Fprintf(&p.b, `<circle cx="%s" cy="%s" r="%s" fill="none" stroke="%s" stroke-width="2.5"><title>best %s ms</title></circle>`, f1(bestX), f1(bestY), f1(min(cw, ch)/2-1), colServed, num(lo))
	p.end()
	colorBar(p, x0, y0+ch*ny+46, min(300, w-x0-padRight), lo, hi)
	return p.svg()
}

// shortValue shortens a value for a tick label.
func shortValue(v string) string {
	if r := []rune(v); len(r) > 8 {
		return string(r[:7]) + "…"
	}
	return v
}

// parallelCoords draws each valid trial as a line across one axis per
// parameter (most important first; values in order, evenly spaced) and a
// last axis of its time (log), coloured by time; the best in bold.
func parallelCoords(id string, j *job, es []effect, ts []trialVals) string {
	if len(ts) < 2 {
		return ""
	}
	axes := es
	if len(axes) > 12 {
		axes = axes[:12]
	}
	idx := make([]int, len(axes))
	pos := make([]map[string]float64, len(axes))
	for i, e := range axes {
		idx[i] = slices.Index(j.params, e.Param)
		pos[i] = map[string]float64{}
		for k, l := range e.Levels {
			pos[i][l.Value] = 0.5
			if len(e.Levels) > 1 {
				pos[i][l.Value] = float64(k) / float64(len(e.Levels)-1)
			}
		}
	}
	lo, hi := ts[0].ms, ts[0].ms
	for _, t := range ts {
		lo, hi = min(lo, t.ms), max(hi, t.ms)
	}
	// Slowest first, so the fast lines lie on top; beyond maxLines an even
	// stride of them, with the fastest tenth kept whole.
	order := slices.Clone(ts)
	slices.SortStableFunc(order, func(a, b trialVals) int { return cmp.Compare(b.ms, a.ms) })
	note := ""
	if len(order) > maxLines {
		keep := maxLines / 10
		rest, fast := order[:len(order)-keep], order[len(order)-keep:]
		step := float64(len(rest)) / float64(maxLines-keep)
		var picked []trialVals
		for f := 0.0; int(f) < len(rest); f += step {
			picked = append(picked, rest[int(f)])
		}
		note = fmt.Sprintf(`<p class="note">%d of %d valid trials drawn: the fastest %d and an even sample of the rest.</p>`, len(picked)+keep, len(order), keep)
		order = append(picked, fast...)
	}
	n := float64(len(axes))
	const h = 360.0
	p := newPlot(id, "parallel coordinates", 860, h, newScale(0, n, false, 0, 0), newScale(0, 1, false, 0, 0))
	p.x.lo, p.x.hi = 0, n
	p.y.a, p.y.b = h-padBottom-24, padTop+16
	ax := func(i int) float64 { return p.x.a + (p.x.b-p.x.a-40)*float64(i)/n + 20 }
	yOf := func(f float64) float64 { return p.y.a + (p.y.b-p.y.a)*(1-f) } // fast at the bottom of the time axis
	scaleT := timeScale(lo, hi)
	for i := 0; i <= len(axes); i++ {
		x := ax(i)
		fmt.Fprintf(&p.b, `<line class="frame" x1="%s" x2="%s" y1="%s" y2="%s"/>`, f1(x), f1(x), f1(p.y.b), f1(p.y.a))
		if i == len(axes) {
			p.text(x, p.y.b-8, "middle", "axis", "time (ms)")
			p.text(x+4, p.y.a+4, "start", "tick pctick", num(lo))
			p.text(x+4, p.y.b+4, "start", "tick pctick", num(hi))
			continue
		}
		p.text(x, p.y.b-8, "middle", "axis", axes[i].Param)
		ls := axes[i].Levels
		every := max(1, int(math.Ceil(float64(len(ls))*14/(p.y.a-p.y.b))))
		for k, l := range ls {
			if k%every == 0 || k == len(ls)-1 {
				p.text(x-4, yOf(pos[i][l.Value])+4, "end", "tick pctick", shortValue(l.Value))
			}
		}
	}
	line := func(t trialVals) string {
		var d strings.Builder
		for i := range axes {
			fmt.Fprintf(&d, "%s%s %s", map[bool]string{true: "M", false: "L"}[i == 0], f1(ax(i)), f1(yOf(pos[i][t.vals[idx[i]]])))
		}
		fmt.Fprintf(&d, "L%s %s", f1(ax(len(axes))), f1(yOf(1-scaleT(t.ms))))
		return d.String()
	}
	// One path per colour band keeps a page of thousands of trials small.
	const bands = 10
	var paths [bands]strings.Builder
	for _, t := range order {
		k := min(int(scaleT(t.ms)*bands), bands-1)
		paths[k].WriteString(line(t))
	}
	// Fainter lines the more there are, so that crossings stay readable.
	op := strconv.FormatFloat(min(0.55, 8/math.Sqrt(float64(len(order)))), 'f', 2, 64)
	p.begin("trial (colour: time)", ramp(0.5), "line")
	for k := bands - 1; k >= 0; k-- {
		if paths[k].Len() > 0 {
			fmt.Fprintf(&p.b, `<path d="%s" stroke="%s" stroke-width="1" stroke-opacity="%s" fill="none"/>`, paths[k].String(), ramp((float64(k)+0.5)/bands), op)
		}
	}
	p.end()
	best := order[len(order)-1]
	p.begin("best "+best.key+" ("+num(best.ms)+" ms)", colServed, "line")
	fmt.Fprintf(&p.b, `<path d="%s" stroke="%s" stroke-width="3" fill="none"><title>best %s: %s ms</title></path>`, line(best), colServed, esc(best.key), num(best.ms))
	p.end()
	colorBar(p, p.x.a, h-28, 300, lo, hi)
	return note + p.svg()
}
