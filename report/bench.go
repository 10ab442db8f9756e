package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bench is what a strategy comparison draws: quasimctl bench's fraction of
// the optimum after k evaluations, per recorded space and strategy, with
// the random-search expectation and the peers' scores.
type Bench struct {
	Title     string
	Source    string
	Generated time.Time
	Budget    int
	Seeds     int
	Ks        []int
	Spaces    []BenchSpace // the mean over spaces first, if any
	PeersFrom string       // where the peers' scores come from
}

// BenchSpace is one recorded space (or the mean over them).
type BenchSpace struct {
	Name      string
	Configs   int
	Valid     int
	OptimumMS float64
	Device    string
	Ours      []Curve
	Peers     []Curve
	Random    map[int]float64 // expected fraction of random search without replacement
}

// Curve is one strategy's mean fraction of the optimum after k evaluations.
type Curve struct {
	Name      string
	At        map[int]float64
	EvalsTo95 *float64 // median evaluations to 0.95; nil when not reached
}

// WriteBench writes the comparison as one HTML page: per space, the
// fraction of the optimum against evaluations, each of ours a line, the
// random expectation dashed and the peers' points in grey; then the
// numbers.
func WriteBench(w io.Writer, in Bench) error {
	var b strings.Builder
	title := in.Title
	if title == "" {
		title = "quasim search benchmark"
	}
	fmt.Fprintf(&b, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="%s"><meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>%s</title><style>%s</style></head><body>`,
		csp, esc(title), pageCSS)
	fmt.Fprintf(&b, `<header><h1>%s</h1><p class="meta">%s · budget %d evaluations · %d seeds`, esc(title), esc(in.Source), in.Budget, in.Seeds)
	if !in.Generated.IsZero() {
		fmt.Fprintf(&b, ` · %s`, esc(in.Generated.UTC().Format(time.RFC3339)))
	}
	b.WriteString(`</p>`)
	if in.PeersFrom != "" {
		fmt.Fprintf(&b, `<p class="note">Peers: %s</p>`, esc(in.PeersFrom))
	}
	b.WriteString(`<p class="note">Fraction of the optimum after k unique evaluations: optimum / best valid time among the first k (0 while none is valid), the mean over seeds.</p></header>`)
	if len(in.Spaces) == 0 || len(in.Ks) == 0 {
		b.WriteString(empty("No spaces or evaluation counts to draw."))
	}
	for i, s := range in.Spaces {
		id := "space-" + strconv.Itoa(i+1)
		fmt.Fprintf(&b, `<section class="view space" id="%s"><h2>%s</h2><p class="meta">`, id, esc(s.Name))
		if s.Configs > 0 {
			fmt.Fprintf(&b, `%d configs, %d valid, optimum %s ms`, s.Configs, s.Valid, num(s.OptimumMS))
		}
		if s.Device != "" {
			fmt.Fprintf(&b, ` · %s`, esc(s.Device))
		}
		b.WriteString(`</p>`)
		b.WriteString(benchChart(id+"-chart", s, in.Ks))
		benchTable(&b, s, in.Ks)
		b.WriteString(`</section>`)
	}
	b.WriteString(`</body></html>`)
	_, err := io.WriteString(w, b.String())
	return err
}

// benchChart draws one space's curves.
func benchChart(id string, s BenchSpace, ks []int) string {
	if len(s.Ours) == 0 || len(ks) == 0 {
		return empty("No runs on this space.")
	}
	lo, hi := float64(ks[0]), float64(ks[len(ks)-1])
	xs := newScale(lo, hi, false, 0, 0)
	if hi/lo >= 4 {
		xs = scale{lo: lo / 1.2, hi: hi * 1.2, log: true}
	}
	// The y axis starts a tenth below the lowest point: the curves
	// differ in the last tenths.
	least := 1.0
	for _, cs := range [][]Curve{s.Ours, s.Peers, {{At: s.Random}}} {
		for _, c := range cs {
			for _, k := range ks {
				if v, ok := c.At[k]; ok {
					least = min(least, v)
				}
			}
		}
	}
	ylo := max(0, math.Floor((least-0.05)*10)/10)
	p := newPlot(id, "fraction of optimum: "+s.Name, 860, 360, xs, scale{lo: ylo, hi: 1.02})
	for _, k := range ks {
		p.xTicks = append(p.xTicks, float64(k))
	}
	p.axes("evaluations k", "fraction of the optimum")
	xy := func(c Curve) ([]float64, []float64, []string) {
		var x, y []float64
		var t []string
		for _, k := range ks {
			if v, ok := c.At[k]; ok {
				x, y = append(x, float64(k)), append(y, v)
				t = append(t, fmt.Sprintf("%s at %d: %.3f", c.Name, k, v))
			}
		}
		return x, y, t
	}
	if len(s.Peers) > 0 {
		p.begin("peers", "#9aa0aa", "dot")
		for _, c := range s.Peers {
			x, y, t := xy(c)
			p.polyline(x, y, "#d3d6dc", 1, false, "")
			p.dots(x, y, t, "#9aa0aa", 3)
		}
		p.end()
	}
	if len(s.Random) > 0 {
		r := Curve{Name: "random (expected)", At: s.Random}
		x, y, t := xy(r)
		p.begin(r.Name, "#555", "line")
		p.polyline(x, y, "#555", 1.5, false, "5 4")
		p.dots(x, y, t, "#555", 2.5)
		p.end()
	}
	for i, c := range s.Ours {
		x, y, t := xy(c)
		col := memberColor(i)
		p.begin(c.Name, col, "line")
		p.polyline(x, y, col, 2.5, false, "")
		p.dots(x, y, t, col, 4)
		p.end()
	}
	return p.svg()
}

// benchTable lists the numbers behind a chart.
func benchTable(b *strings.Builder, s BenchSpace, ks []int) {
	b.WriteString(`<table class="plain fractions"><thead><tr><th>strategy</th>`)
	for _, k := range ks {
		fmt.Fprintf(b, `<th>k=%d</th>`, k)
	}
	b.WriteString(`<th>evals to 95%</th></tr></thead><tbody>`)
	row := func(c Curve, class string) {
		fmt.Fprintf(b, `<tr class="%s"><td>%s</td>`, class, esc(c.Name))
		for _, k := range ks {
			if v, ok := c.At[k]; ok {
				fmt.Fprintf(b, `<td>%.3f</td>`, v)
			} else {
				b.WriteString(`<td>–</td>`)
			}
		}
		to := "–"
		if c.EvalsTo95 != nil {
			to = num(*c.EvalsTo95)
		}
		fmt.Fprintf(b, `<td>%s</td></tr>`, to)
	}
	for _, c := range s.Ours {
		row(c, "ours")
	}
	if len(s.Random) > 0 {
		row(Curve{Name: "random (expected)", At: s.Random}, "random")
	}
	peers := slices.Clone(s.Peers)
	slices.SortFunc(peers, func(a, c Curve) int { return strings.Compare(a.Name, c.Name) })
	for _, c := range peers {
		row(Curve{Name: "peer: " + c.Name, At: c.At, EvalsTo95: c.EvalsTo95}, "peer")
	}
	b.WriteString(`</tbody></table>`)
}
