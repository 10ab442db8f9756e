package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
)

func trial(key string, ms float64) api.Trial {
	st := "ok"
	if ms == 0 {
		st = "compile"
	}
	return api.Trial{Key: key, Status: st, TimeMS: ms}
}

func TestConvergence(t *testing.T) {
	c := convergenceOf([]api.Trial{trial("a", 0), trial("b", 8), trial("c", 10), trial("d", 4), trial("e", 5), trial("f", 2)})
	if c.n != 6 || c.valid != 5 || c.bestMS != 2 || c.bestKey != "f" {
		t.Fatalf("convergence = %+v", c)
	}
	want := []step{{2, 8, "b"}, {4, 4, "d"}, {6, 2, "f"}}
	if len(c.steps) != len(want) {
		t.Fatalf("steps = %v, want %v", c.steps, want)
	}
	for i := range want {
		if c.steps[i] != want[i] {
			t.Errorf("step %d = %v, want %v", i, c.steps[i], want[i])
		}
	}
	for k, f := range map[int]float64{1: 0, 2: 0.25, 3: 0.25, 4: 0.5, 5: 0.5, 6: 1} {
		if got := c.fraction(k); got != f {
			t.Errorf("fraction(%d) = %v, want %v", k, got, f)
		}
	}
	if got := c.evalsTo(0.95); got != 6 {
		t.Errorf("evalsTo(0.95) = %d, want 6", got)
	}
	if got := c.evalsTo(0.5); got != 4 {
		t.Errorf("evalsTo(0.5) = %d, want 4", got)
	}
}

// A parameter that alone sets the time explains all its variance; one
// whose values are balanced against it explains none.
func TestEffects(t *testing.T) {
	var trials []api.Trial
	for _, a := range []string{"1", "2", "4"} {
		for _, b := range []string{"x", "y"} {
			ms, _ := strconv.ParseFloat(a, 64)
			trials = append(trials, trial(a+","+b, ms))
		}
	}
	trials = append(trials, trial("1,x", 0), trial("9", 3)) // failed, unsplittable: ignored
	es := effects(trials, []string{"a", "b"})
	if len(es) != 2 || es[0].Param != "a" || es[1].Param != "b" {
		t.Fatalf("effects = %+v", es)
	}
	if math.Abs(es[0].Importance-1) > 1e-12 || math.Abs(es[1].Importance) > 1e-12 {
		t.Errorf("importance a = %v, b = %v, want 1 and 0", es[0].Importance, es[1].Importance)
	}
	if got := es[0].Levels; len(got) != 3 || got[0].Value != "1" || got[2].Value != "4" || got[2].MedianMS != 4 || got[0].N != 2 {
		t.Errorf("levels of a = %+v", got)
	}
	// Half explained: a two-level parameter moving log time by ±d over a
	// spread of ±d and ±d of noise.
	trials = nil
	for i, k := range []string{"p,u", "p,v", "q,u", "q,v"} {
		e := []float64{1, 1, -1, -1}[i] + []float64{1, -1, 1, -1}[i]
		trials = append(trials, trial(k, math.Exp(e)))
	}
	es = effects(trials, []string{"a", "b"})
	for _, e := range es {
		if math.Abs(e.Importance-0.5) > 1e-12 {
			t.Errorf("importance %s = %v, want 0.5", e.Param, e.Importance)
		}
	}
	if es := effects([]api.Trial{trial("1,x", 2), trial("2,y", 2)}, []string{"a", "b"}); es != nil {
		t.Errorf("effects of equal times = %+v, want nil", es)
	}
	if es := effects([]api.Trial{trial("1,x", 2)}, []string{"a", "b"}); es != nil {
		t.Errorf("effects of one trial = %+v, want nil", es)
	}
}

func TestParetoFront(t *testing.T) {
	e := func(key string, ms, mj float64) api.Trial {
		x := trial(key, ms)
		x.EnergyMJ = mj
		return x
	}
	all, front := paretoFront([]api.Trial{
		e("a", 1, 10), e("b", 2, 5), e("c", 3, 6), e("d", 4, 1), e("a", 9, 9), e("f", 2, 5), trial("g", 1), e("h", 0, 0),
	})
	if len(all) != 5 {
		t.Errorf("points = %d, want 5 (a once, g and h without energy)", len(all))
	}
	var keys []string
	for _, p := range front {
		keys = append(keys, p.Key)
	}
	if got := strings.Join(keys, " "); got != "a b d" {
		t.Errorf("front = %q, want \"a b d\"", got)
	}
}

var seriesRe = regexp.MustCompile(`data-series="(\d+)"`)

// charts returns each chart of page, from its <svg class="chart" to the
// first </svg> after it, as the regexp (?s)<svg class="chart".*?</svg>
// would find them, 145 times faster on the fixture's page (6.3 ms against
// 43 µs, go test -bench on this 2-core machine): over a whole page that
// regexp took most of FuzzWrite's time.
func charts(page string) []string {
	const start, end = `<svg class="chart"`, `</svg>`
	var out []string
	for {
		i := strings.Index(page, start)
		if i < 0 {
			return out
		}
		j := strings.Index(page[i:], end)
		if j < 0 {
			return out
		}
		out = append(out, page[i:i+j+len(end)])
		page = page[i+j+len(end):]
	}
}

// render writes in and returns the page.
func render(t *testing.T, in Input) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Every chart is well-formed XML with as many series as it declares, each
// non-empty; each kind of job shows what it has or says why not.
func TestWriteFixture(t *testing.T) {
	page := render(t, fixture())
	svgs := charts(page)
	if len(svgs) < 8 {
		t.Fatalf("%d charts, want at least 8", len(svgs))
	}
	for i, s := range svgs {
		if err := xml.Unmarshal([]byte(s), new(any)); err != nil {
			t.Errorf("chart %d is not well-formed: %v", i, err)
		}
		m := seriesRe.FindStringSubmatch(s)
		n, _ := strconv.Atoi(m[1])
		groups := strings.Split(s, `<g class="series"`)[1:]
		if n == 0 || len(groups) != n {
			t.Errorf("chart %d declares %d series and has %d", i, n, len(groups))
		}
		for _, g := range groups {
			body := g[strings.Index(g, ">")+1 : strings.Index(g, "</g>")]
			if body == "" {
				t.Errorf("chart %d has an empty series: %.80s", i, g)
			}
		}
	}
	for _, want := range []string{
		"Nothing measured yet (1)", // sgemm 128
		"not due yet: its first cycle is due at 2026-11-20 15:00 (schedule &#34;0 */6 * * *&#34;)",
		"All 2 trials failed (runtime 1, timeout 1)",            // sgemm 512
		"One valid trial: nothing has converged yet",            // sgemm 1024
		"No tuning cycles: this job&#39;s trials were imported", // foreign
		"No valid trial of this job carries an energy reading",  // foreign
		"Parameter effects need at least two valid trials; this job has 1",
		"No certificate issued for this job",
		"revoked 2026-11-20",
		"max_rel_err=2.5e-06",
		"not checked: the evaluator gives no bound",
		"Roofline",
		"Ceilings of cpu/x measured by quasimd",
		"fixture &lt;report&gt;",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Offline: the only URL is the SVG namespace.
	if u := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+`).FindAllString(strings.ReplaceAll(page, "http://www.w3.org/2000/svg", ""), -1); len(u) > 0 {
		t.Errorf("page names URLs %v", u)
	}
	if !strings.Contains(page, "default-src 'none'") {
		t.Error("page lacks its Content-Security-Policy")
	}
}

// The trial tables' JSON cannot close its script element, and text is
// escaped everywhere else.
func TestWriteEscapes(t *testing.T) {
	in := Input{Kernels: []Kernel{{
		Info:   api.Kernel{Name: "<b>k</b>"},
		Trials: []api.Trial{{Key: "</script><script>alert(1)</script>", Status: "compile", Error: "</script>", Problem: "p", Device: "d"}},
	}}}
	page := render(t, in)
	if strings.Count(page, "</script>") != 2 { // the JSON's and the page script's
		t.Errorf("page has %d </script>, want 2", strings.Count(page, "</script>"))
	}
	if strings.Contains(page, "<b>k</b>") {
		t.Error("kernel name not escaped")
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="[^"]+">(.*?)</script>`).FindStringSubmatch(page)
	var d tableData
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatal(err)
	}
	if d.Rows[0][1] != "</script><script>alert(1)</script>" {
		t.Errorf("key in table = %v", d.Rows[0][1])
	}
}

func TestWriteNothing(t *testing.T) {
	if page := render(t, Input{}); !strings.Contains(page, "No kernels or jobs to report") {
		t.Error("empty report does not say so")
	}
}

func TestScaleTicks(t *testing.T) {
	for _, s := range []scale{newScale(1, 100, false, 0, 100), newScale(0.01, 50, true, 0, 100), newScale(3, 3, true, 0, 100), newScale(2, 7, true, 0, 100)} {
		ts := s.ticks()
		if len(ts) < 2 {
			t.Errorf("%+v: ticks %v, want at least 2", s, ts)
		}
		for _, v := range ts {
			if v < s.lo || v > s.hi {
				t.Errorf("%+v: tick %v outside", s, v)
			}
		}
	}
}

func benchFixture() Bench {
	ks := []int{25, 50, 100, 200, 400}
	curve := func(name string, base float64) Curve {
		c := Curve{Name: name, At: map[int]float64{}}
		for i, k := range ks {
			c.At[k] = min(1, base+0.05*float64(i))
		}
		return c
	}
	to95 := 72.5
	es := curve("es", 0.8)
	es.EvalsTo95 = &to95
	return Bench{Budget: 400, Seeds: 5, Ks: ks, PeersFrom: "Kernel Tuner <1.4>", Spaces: []BenchSpace{
		{Name: "mean over 2 spaces", Ours: []Curve{curve("random", 0.7), es}, Random: curve("", 0.69).At, Peers: []Curve{curve("bayes_opt", 0.75), curve("pso", 0.6)}},
		{Name: "gemm", Configs: 17956, Valid: 17956, OptimumMS: 5.66, Ours: []Curve{curve("random", 0.7), es}, Random: curve("", 0.69).At},
		{Name: "none"},
	}}
}

// The bench page draws each space's curves as the series it declares:
// peers, the random expectation and each strategy of ours.
func TestWriteBench(t *testing.T) {
	var b strings.Builder
	if err := WriteBench(&b, benchFixture()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	svgs := charts(page)
	if len(svgs) != 2 {
		t.Fatalf("%d charts, want 2 (the space without runs says so)", len(svgs))
	}
	for i, want := range []int{4, 3} {
		if err := xml.Unmarshal([]byte(svgs[i]), new(any)); err != nil {
			t.Errorf("chart %d: %v", i, err)
		}
		if got := seriesRe.FindStringSubmatch(svgs[i])[1]; got != strconv.Itoa(want) || strings.Count(svgs[i], `<g class="series"`) != want {
			t.Errorf("chart %d declares %s series, want %d", i, got, want)
		}
	}
	for _, want := range []string{"No runs on this space", "Kernel Tuner &lt;1.4&gt;", "peer: bayes_opt", "<td>72.5</td>", "17956 configs"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestServedAgainstCert: a served time is flagged when it lies outside the
// served certificate's 95% CI of its median, on either side, or differs
// from its median where the interval is unknown.
func TestServedAgainstCert(t *testing.T) {
	lat := &Latency{Samples: 30, MedianMS: 10, CILowMS: 9, CIHighMS: 11}
	tests := []struct {
		name     string
		servedMS float64
		lat      *Latency
		flag     bool
	}{
		{"equal", 10, lat, false},
		{"inside the top", 11 * 0.999, lat, false},
		{"past the top", 11 * 1.001, lat, true},
		{"inside the bottom", 9 * 1.001, lat, false},
		{"under the bottom", 9 * 0.999, lat, true},
		{"issue 37: 0.253 against 0.459", 0.253, &Latency{Samples: 15, MedianMS: 0.459, CILowMS: 0.448, CIHighMS: 0.479}, true},
		{"no body: the listing's median", 10, nil, false},
		{"no body, another time", 12, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &job{served: &api.Config{Key: "a", TimeMS: tt.servedMS, Certificate: "c1"},
				certs: []Cert{{CertSummary: api.CertSummary{ID: "c0", TimeMS: 1}}, {CertSummary: api.CertSummary{ID: "c1", TimeMS: 10, Served: true}, Latency: tt.lat}}}
			r, ok := servedAgainstCert(j)
			if !ok || r.flag != tt.flag || r.certID != "c1" {
				t.Errorf("servedAgainstCert(%v ms) = %+v, %v; want flag %v", tt.servedMS, r, ok, tt.flag)
			}
		})
	}
	if _, ok := servedAgainstCert(&job{served: &api.Config{TimeMS: 3, Certificate: "x"}}); ok {
		t.Error("compared without a certificate")
	}
}

// TestTwoParamViews: the heat map's cells are the best time of each pair
// of the two most important parameters' values, the pairs never measured
// are marked, and the parallel coordinates draw at most maxLines trials
// and say so.
func TestTwoParamViews(t *testing.T) {
	j := &job{params: []string{"a", "b", "c"}}
	for a := 1; a <= 3; a++ {
		for b := 1; b <= 2; b++ {
			for c := 1; c <= 2; c++ {
				if a == 3 && b == 2 {
					continue // never measured
				}
				key := strconv.Itoa(a) + "," + strconv.Itoa(b) + "," + strconv.Itoa(c)
				j.trials = append(j.trials, trial(key, float64(a*a*10+b*3+c)))
			}
		}
	}
	es := effects(j.trials, j.params)
	var sb strings.Builder
	twoParamView(&sb, "x", j, es)
	page := sb.String()
	for _, want := range []string{
		"a=1, b=1: best 14 ms (1,1,1) of 2 trials",
		"a=3, b=1: best 94 ms (3,1,1) of 2 trials",
		"a=3, b=2: no valid trial",
		`data-name="not measured"`,
		`id="x-parallel"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("two-parameter views lack %q", want)
		}
	}
	for _, s := range charts(page) {
		if err := xml.Unmarshal([]byte(s), new(any)); err != nil {
			t.Errorf("chart is not well-formed: %v", err)
		}
	}
	sb.Reset()
	twoParamView(&sb, "y", &job{params: []string{"a"}, trials: j.trials[:4]}, effects(j.trials[:4], []string{"a"}))
	if !strings.Contains(sb.String(), "need two parameters whose values vary") {
		t.Errorf("one parameter: %s", sb.String())
	}
	big := &job{params: []string{"a", "b"}}
	for i := range maxLines + 500 {
		big.trials = append(big.trials, trial(strconv.Itoa(i%40)+","+strconv.Itoa(i/40), float64(1+i)))
	}
	sb.Reset()
	twoParamView(&sb, "z", big, effects(big.trials, big.params))
	if want := fmt.Sprintf("%d of %d valid trials drawn: the fastest %d", maxLines, maxLines+500, maxLines/10); !strings.Contains(sb.String(), want) {
		t.Errorf("many trials: no %q", want)
	}
}
