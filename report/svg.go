package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// scale maps data values in [lo, hi] to pixels in [a, b], linearly or on a
// log scale.
type scale struct {
	lo, hi float64
	log    bool
	a, b   float64
}

// newScale pads [lo, hi] a little and picks a log scale for positive data
// that spans more than a factor of 20 when logOK.
func newScale(lo, hi float64, logOK bool, a, b float64) scale {
	s := scale{lo: lo, hi: hi, a: a, b: b}
	if logOK && lo > 0 && hi/lo > 20 {
		s.log = true
		// Padded within the floats: the padding must not reach 0 or +Inf.
		s.lo, s.hi = max(lo/1.15, math.SmallestNonzeroFloat64), min(hi*1.15, math.MaxFloat64)
		return s
	}
	if hi <= lo {
		d := math.Abs(lo) * 0.1
		if d == 0 {
			d = 1
		}
		s.lo, s.hi = lo-d, hi+d
		return s
	}
	pad := (hi - lo) * 0.05
	s.lo, s.hi = max(lo-pad, -math.MaxFloat64), min(hi+pad, math.MaxFloat64)
	if lo >= 0 && s.lo < 0 {
		s.lo = 0
	}
	return s
}

func (s scale) at(v float64) float64 {
	var f float64
	if s.log {
		f = (math.Log(v) - math.Log(s.lo)) / (math.Log(s.hi) - math.Log(s.lo))
	} else {
		f = (v - s.lo) / (s.hi - s.lo)
	}
	return s.a + f*(s.b-s.a)
}

// ticks are round values inside the scale: powers of ten (with 2 and 5
// between them when few) on a log scale, steps of 1, 2 or 5 times a power
// of ten otherwise.
func (s scale) ticks() []float64 {
	var ts []float64
	if s.log {
		for e := math.Floor(math.Log10(s.lo)); e <= math.Ceil(math.Log10(s.hi)); e++ {
			for _, m := range []float64{1, 2, 5} {
				v := m * math.Pow(10, e)
				if v >= s.lo && v <= s.hi && (m == 1 || math.Log10(s.hi/s.lo) < 2) {
					ts = append(ts, v)
				}
			}
		}
		return ts
	}
	span := s.hi - s.lo
	raw := span / 6
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	for i := math.Ceil(s.lo / step); i*step <= s.hi; i++ {
		if v := i * step; v >= s.lo && v <= s.hi {
			ts = append(ts, v)
		}
	}
	return ts
}

// num formats a number for a label: three significant digits, no
// exponent for everyday magnitudes.
func num(v float64) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e6 || a < 1e-3 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	s := strconv.FormatFloat(v, 'f', max(0, 2-int(math.Floor(math.Log10(a)))), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func esc(s string) string { return html.EscapeString(s) }

// f1 formats a pixel coordinate.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// Margins of a plot's drawing area inside its SVG.
const (
	padLeft   = 64
	padRight  = 16
	padTop    = 28
	padBottom = 44
)

// plot writes one SVG chart. Each series is a <g class="series"> with a
// data-name, and the SVG carries data-series with their count, which the
// browser tests compare against what rendered.
type plot struct {
	b        strings.Builder
	w, h     float64
	x, y     scale
	series   int
	legend   []legendEntry
	open     bool
	chartID  string
	ariaName string
	xTicks   []float64 // when set, the x ticks instead of round values
}

type legendEntry struct{ name, color, shape string }

// newPlot starts a chart of w×h pixels whose drawing area maps x and y
// (their pixel ranges are set here).
func newPlot(id, title string, w, h float64, x, y scale) *plot {
	p := &plot{w: w, h: h, chartID: id, ariaName: title}
	x.a, x.b = padLeft, w-padRight
	y.a, y.b = h-padBottom, padTop
	p.x, p.y = x, y
	return p
}

// axes draws the frame, grid, ticks and axis titles.
func (p *plot) axes(xTitle, yTitle string) {
	x0, x1, y0, y1 := p.x.a, p.x.b, p.y.a, p.y.b
	fmt.Fprintf(&p.b, `<rect class="frame" x="%s" y="%s" width="%s" height="%s"/>`, f1(x0), f1(y1), f1(x1-x0), f1(y0-y1))
	xt := p.xTicks
	if xt == nil {
		xt = p.x.ticks()
	}
	for _, t := range xt {
		px := p.x.at(t)
		fmt.Fprintf(&p.b, `<line class="grid" x1="%s" x2="%s" y1="%s" y2="%s"/><text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`,
			f1(px), f1(px), f1(y1), f1(y0), f1(px), f1(y0+14), num(t))
	}
	for _, t := range p.y.ticks() {
		py := p.y.at(t)
		fmt.Fprintf(&p.b, `<line class="grid" x1="%s" x2="%s" y1="%s" y2="%s"/><text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`,
			f1(x0), f1(x1), f1(py), f1(py), f1(x0-4), f1(py+4), num(t))
	}
	fmt.Fprintf(&p.b, `<text class="axis" x="%s" y="%s" text-anchor="middle">%s</text>`, f1((x0+x1)/2), f1(p.h-8), esc(xTitle))
	fmt.Fprintf(&p.b, `<text class="axis" transform="translate(14 %s) rotate(-90)" text-anchor="middle">%s</text>`, f1((y0+y1)/2), esc(yTitle))
}

// begin opens a series; shape is "dot", "line" or "box" for the legend.
func (p *plot) begin(name, color, shape string) {
	if p.open {
		panic("report: series opened inside a series")
	}
	p.open = true
	p.series++
	p.legend = append(p.legend, legendEntry{name, color, shape})
	fmt.Fprintf(&p.b, `<g class="series" data-name="%s">`, esc(name))
}

func (p *plot) end() {
	p.open = false
	p.b.WriteString(`</g>`)
}

// dots draws points; with many points one path of zero-length strokes
// (round caps) keeps the file small, else circles carry hover titles.
func (p *plot) dots(xs, ys []float64, titles []string, color string, r float64) {
	if len(xs) > 1500 || titles == nil {
		var d strings.Builder
		for i := range xs {
			fmt.Fprintf(&d, "M%s %sh0", f1(p.x.at(xs[i])), f1(p.y.at(ys[i])))
		}
		fmt.Fprintf(&p.b, `<path d="%s" stroke="%s" stroke-width="%s" stroke-linecap="round" fill="none"/>`, d.String(), color, f1(2*r))
		return
	}
	for i := range xs {
		fmt.Fprintf(&p.b, `<circle cx="%s" cy="%s" r="%s" fill="%s"><title>%s</title></circle>`,
			f1(p.x.at(xs[i])), f1(p.y.at(ys[i])), f1(r), color, esc(titles[i]))
	}
}

// polyline draws a line through the points; step draws horizontal then
// vertical segments (a best-so-far curve).
func (p *plot) polyline(xs, ys []float64, color string, width float64, step bool, dash string) {
	if len(xs) == 0 {
		return
	}
	var d strings.Builder
	fmt.Fprintf(&d, "M%s %s", f1(p.x.at(xs[0])), f1(p.y.at(ys[0])))
	for i := 1; i < len(xs); i++ {
		if step {
			fmt.Fprintf(&d, "H%s", f1(p.x.at(xs[i])))
		}
		fmt.Fprintf(&d, "L%s %s", f1(p.x.at(xs[i])), f1(p.y.at(ys[i])))
	}
	extra := ""
	if dash != "" {
		extra = ` stroke-dasharray="` + dash + `"`
	}
	fmt.Fprintf(&p.b, `<path d="%s" stroke="%s" stroke-width="%s" fill="none"%s/>`, d.String(), color, f1(width), extra)
}

// hline draws a horizontal line across the drawing area at y with a label.
func (p *plot) hline(y float64, color, label string) {
	py := p.y.at(y)
	fmt.Fprintf(&p.b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="6 4"><title>%s</title></line>`,
		f1(p.x.a), f1(p.x.b), f1(py), f1(py), color, esc(label))
	fmt.Fprintf(&p.b, `<text class="mark" x="%s" y="%s" text-anchor="end" fill="%s">%s</text>`, f1(p.x.b-4), f1(py-4), color, esc(label))
}

// marker draws a ring around a point with a label.
func (p *plot) marker(x, y float64, color, label string) {
	px, py := p.x.at(x), p.y.at(y)
	fmt.Fprintf(&p.b, `<circle cx="%s" cy="%s" r="7" fill="none" stroke="%s" stroke-width="2.5"><title>%s</title></circle>`, f1(px), f1(py), color, esc(label))
	fmt.Fprintf(&p.b, `<text class="mark" x="%s" y="%s" fill="%s">%s</text>`, f1(px+9), f1(py-9), color, esc(label))
}

// rect draws a rectangle in pixels.
func (p *plot) rect(x, y, w, h float64, color, title string) {
	fmt.Fprintf(&p.b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`, f1(x), f1(y), f1(w), f1(h), color, esc(title))
}

// text writes a label in pixels.
func (p *plot) text(x, y float64, anchor, class, s string) {
	fmt.Fprintf(&p.b, `<text class="%s" x="%s" y="%s" text-anchor="%s">%s</text>`, class, f1(x), f1(y), anchor, esc(s))
}

// Legend layout: an entry is a swatch, a gap and its name; names are
// measured at legendCharW per character (12 px system-ui averages less, so
// an estimate on the wide side), and rows are legendRow apart.
const (
	legendCharW = 7.2
	legendRow   = 18.0
	legendPad   = 30.0 // swatch, gap and the space after the name
)

// svg closes the chart: the legend along the top, wrapped onto as many
// rows as its entries need (the chart grows by the extra rows, so no entry
// is cut off at the right edge or left without a label), then the chart.
// A name too long for a row of its own is shortened with an ellipsis and
// carries the whole name as its hover title.
func (p *plot) svg() string {
	var l strings.Builder
	x, y := float64(padLeft), 12.0
	right := p.w - padRight
	for _, e := range p.legend {
		name := []rune(e.name)
		title := ""
		if most := int((right - padLeft - legendPad) / legendCharW); len(name) > most {
			title = e.name
			name = append(name[:max(most-1, 1)], '…')
		}
		w := legendPad + legendCharW*float64(len(name))
		if x > padLeft && x+w-12 > right { // the trailing space may pass the edge
			x, y = padLeft, y+legendRow
		}
		fmt.Fprintf(&l, `<g class="legend-entry" data-name="%s">`, esc(e.name))
		if title != "" {
			fmt.Fprintf(&l, `<title>%s</title>`, esc(title))
		}
		switch e.shape {
		case "line":
			fmt.Fprintf(&l, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" stroke-width="2.5"/>`, f1(x), f1(x+14), f1(y), f1(y), e.color)
		case "ring":
			fmt.Fprintf(&l, `<circle cx="%s" cy="%s" r="5" fill="none" stroke="%s" stroke-width="2"/>`, f1(x+7), f1(y), e.color)
		default:
			fmt.Fprintf(&l, `<rect x="%s" y="%s" width="10" height="10" fill="%s"/>`, f1(x+2), f1(y-5), e.color)
		}
		fmt.Fprintf(&l, `<text class="legend" x="%s" y="%s">%s</text></g>`, f1(x+18), f1(y+4), esc(string(name)))
		x += w
	}
	extra := y - 12
	body := p.b.String()
	if extra > 0 {
		body = `<g transform="translate(0 ` + f1(extra) + `)">` + body + `</g>`
	}
	h := p.h + extra
	return fmt.Sprintf(`<svg class="chart" id="%s" data-series="%d" role="img" aria-label="%s" viewBox="0 0 %s %s" width="%s" height="%s" xmlns="http://www.w3.org/2000/svg">%s%s</svg>`,
		esc(p.chartID), p.series, esc(p.ariaName), f1(p.w), f1(h), f1(p.w), f1(h), l.String(), body)
}
