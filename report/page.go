package report

import (
	_ "embed"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/quasim/quasim/api"
)

//go:embed page.css
var pageCSS string

//go:embed page.js
var pageJS string

// csp forbids every fetch: only the inline style and script run, and
// images only from data: URLs. The page also names a data: icon, so a
// browser does not ask for /favicon.ico, and sends no Referer: the live
// page's reload must pass the daemon's guard, which refuses one.
const csp = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

// entry is one job of the page with its anchor and convergence.
type entry struct {
	anchor string
	j      *job
	conv   convergence
}

// Write writes the report of in as one HTML page.
func Write(w io.Writer, in Input) error {
	var b strings.Builder
	title := in.Title
	if title == "" {
		title = "quasim tuning report"
	}
	fmt.Fprintf(&b, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="%s"><meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><meta name="viewport" content="width=device-width, initial-scale=1"><title>%s</title><style>%s</style></head><body>`,
		csp, esc(title), pageCSS)
	fmt.Fprintf(&b, `<header><h1>%s</h1><p class="meta">%s`, esc(title), esc(in.Source))
	if !in.Generated.IsZero() {
		fmt.Fprintf(&b, ` · fetched %s`, esc(in.Generated.UTC().Format(time.RFC3339)))
	}
	if in.RefreshS > 0 {
		fmt.Fprintf(&b, ` · <span id="live" data-refresh="%d">live: reloads every %d s</span>`, in.RefreshS, in.RefreshS)
	}
	b.WriteString(`</p></header>`)

	// Jobs with nothing measured are listed after the rest, with the
	// reason, and get no section of empty views.
	var entries, idle []entry
	for _, k := range in.Kernels {
		for _, j := range jobsOf(k) {
			e := entry{"job-" + strconv.Itoa(len(entries)+len(idle)+1), j, convergenceOf(j.trials)}
			if j.unmeasured() {
				idle = append(idle, e)
			} else {
				entries = append(entries, e)
			}
		}
	}
	if len(entries)+len(idle) == 0 {
		b.WriteString(`<section class="view summary" id="summary">` + empty("No kernels or jobs to report.") + `</section>`)
	} else {
		summary(&b, entries, idle)
	}
	for _, e := range entries {
		jobSection(&b, e)
	}
	rooflineSection(&b, entries, in.Ceilings, in.Device)
	causalSection(&b, in)
	memPlanSection(&b, in.MemPlans)
	fmt.Fprintf(&b, `<script>%s</script></body></html>`, pageJS)
	_, err := io.WriteString(w, b.String())
	return err
}

// summary writes the table of jobs, each linked to its section, then the
// jobs with nothing measured and why.
func summary(b *strings.Builder, entries, idle []entry) {
	b.WriteString(`<section class="view summary" id="summary"><h2>Jobs</h2>`)
	defer b.WriteString(`</section>`)
	if len(entries) > 0 {
		summaryTable(b, entries)
	}
	if len(idle) == 0 {
		return
	}
	fmt.Fprintf(b, `<h3>Nothing measured yet (%d)</h3><table class="plain unmeasured"><thead><tr><th>kernel</th><th>problem</th><th>device</th><th>why</th></tr></thead><tbody>`, len(idle))
	for _, e := range idle {
		fmt.Fprintf(b, `<tr id="%s"><td>%s</td><td>%s</td><td>%s</td><td class="why">%s</td></tr>`, e.anchor, esc(e.j.kernel), esc(e.j.problem), esc(e.j.device), esc(e.j.idleReason()))
	}
	b.WriteString(`</tbody></table>`)
}

// summaryTable writes the table of the jobs with something measured.
func summaryTable(b *strings.Builder, entries []entry) {
	b.WriteString(`<table class="plain"><thead><tr><th>kernel</th><th>problem</th><th>device</th><th>trials</th><th>valid</th><th>cycles</th><th>best ms</th><th>served ms</th><th>certificate median ms (95% CI)</th><th>default ms (search)</th><th>speed-up (95% CI)</th></tr></thead><tbody>`)
	for _, e := range entries {
		j := e.j
		served, def, speed := "–", "–", "–"
		if j.served != nil {
			if j.served.TimeMS > 0 {
				served = num(j.served.TimeMS)
			}
			if j.served.DefaultMS > 0 {
				def = num(j.served.DefaultMS)
			}
			if x := j.served.Speedup; x != nil {
				speed = speedup(x)
			}
		}
		best := "–"
		if e.conv.bestMS > 0 {
			best = num(e.conv.bestMS)
		}
		name := j.kernel
		if j.foreign {
			name += " (foreign)"
		}
		servedTD, certTD := `<td>`+served+`</td>`, `<td>–</td>`
		if r, ok := servedAgainstCert(j); ok {
			certTD = `<td>` + r.interval() + `</td>`
			if r.flag {
				servedTD = fmt.Sprintf(`<td class="flag served-flag" title="%s">%s ⚠ %s×</td>`, esc(r.flagText()), served, num(r.ratio))
			}
		}
		fmt.Fprintf(b, `<tr><td><a href="#%s">%s</a></td><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td>%s%s<td>%s</td><td>%s</td></tr>`,
			e.anchor, esc(name), esc(j.problem), esc(j.device), e.conv.n, e.conv.valid, len(j.cycles), best, servedTD, certTD, def, speed)
	}
	b.WriteString(`</tbody></table>`)
}

// jobSection writes every view of one job.
func jobSection(b *strings.Builder, e entry) {
	j, c, a := e.j, e.conv, e.anchor
	fmt.Fprintf(b, `<section class="job" id="%s"><h2>%s <span class="problem">%s</span></h2><p class="meta">device %s · job %s`,
		a, esc(j.kernel), esc(j.problem), esc(j.device), esc(j.id))
	if j.foreign {
		b.WriteString(` · foreign: listed, not tuned here`)
	}
	b.WriteString(`</p>`)

	// Convergence.
	fmt.Fprintf(b, `<div class="view convergence" id="%s-convergence"><h3>Convergence</h3>`, a)
	b.WriteString(convergenceChart(a+"-conv", j, c))
	convergenceNotes(b, j, c)
	b.WriteString(`</div>`)

	// Portfolio.
	fmt.Fprintf(b, `<div class="view portfolio" id="%s-portfolio"><h3>Portfolio</h3>`, a)
	b.WriteString(portfolioChart(a+"-portfolio-chart", j))
	cyclesTable(b, j)
	b.WriteString(`</div>`)

	// Parameters.
	fmt.Fprintf(b, `<div class="view parameters" id="%s-parameters"><h3>Parameters</h3>`, a)
	es := effects(j.trials, j.params)
	switch {
	case es != nil:
		b.WriteString(`<p class="note">Importance: the share of the variance of log time over the valid trials that the parameter's values alone explain (η², the first-order term of a functional ANOVA on the trials; computed on what the search measured, not on a uniform sample of the space).</p>`)
		b.WriteString(importanceChart(a+"-importance", es))
		b.WriteString(`<div class="effects">`)
		for i, ef := range es {
			b.WriteString(effectChart(a+"-effect-"+strconv.Itoa(i), ef))
		}
		b.WriteString(`</div>`)
	case len(j.params) == 0:
		b.WriteString(empty("The kernel's parameter names are unknown, so configs cannot be split into parameters."))
	case c.valid < 2:
		b.WriteString(empty("Parameter effects need at least two valid trials; this job has %d.", c.valid))
	default:
		b.WriteString(empty("The valid trials' times do not vary (or their keys do not split into the %d parameters): no effect to show.", len(j.params)))
	}
	b.WriteString(`</div>`)

	// Two parameters.
	fmt.Fprintf(b, `<div class="view twoparam" id="%s-twoparam"><h3>Two parameters</h3>`, a)
	if es != nil {
		twoParamView(b, a, j, es)
	} else {
		b.WriteString(empty("No parameter effects (see Parameters), so no pair of parameters to draw."))
	}
	b.WriteString(`</div>`)

	// Pareto.
	fmt.Fprintf(b, `<div class="view pareto" id="%s-pareto"><h3>Time and energy</h3>`, a)
	b.WriteString(paretoChart(a+"-pareto-chart", j))
	b.WriteString(`</div>`)

	// Certificates.
	fmt.Fprintf(b, `<div class="view certificates" id="%s-certificates"><h3>Certificates</h3>`, a)
	certsView(b, j)
	b.WriteString(`</div>`)

	// Trials.
	fmt.Fprintf(b, `<div class="view trials" id="%s-trials"><h3>Trials</h3>`, a)
	trialsTable(b, a+"-trials-data", j)
	b.WriteString(`</div></section>`)
}

// convergenceNotes writes the fraction of the best known after k
// evaluations and what the served config gains over the default.
func convergenceNotes(b *strings.Builder, j *job, c convergence) {
	if c.valid == 0 {
		return
	}
	if c.valid == 1 {
		b.WriteString(`<p class="note">One valid trial: nothing has converged yet.</p>`)
	}
	fmt.Fprintf(b, `<p class="note">Best known %s ms (%s) after %d evaluations, %d valid`, num(c.bestMS), esc(c.bestKey), c.n, c.valid)
	if k := c.evalsTo(0.95); k > 0 {
		fmt.Fprintf(b, `; 95%% of it reached at evaluation %d`, k)
	}
	if s := j.served; s != nil && s.TimeMS > 0 {
		fmt.Fprintf(b, `; served %s (%s ms, measured after it was selected`, esc(s.Key), num(s.TimeMS))
		if r, ok := servedAgainstCert(j); ok {
			fmt.Fprintf(b, `; its certificate's median %s ms`, r.interval())
		}
		if x := s.Speedup; x != nil {
			fmt.Fprintf(b, `; %s the default %s, in %d paired rounds`, speedup(x), esc(x.Baseline), x.Rounds)
		}
		if tr := s.Trial; tr != nil && tr.TimeMS > 0 {
			fmt.Fprintf(b, `; %s ms in the search that selected it`, num(tr.TimeMS))
		}
		b.WriteString(`)`)
	} else {
		b.WriteString(`; nothing served (the default answers)`)
	}
	b.WriteString(`.</p><table class="plain fractions"><tr><th>evaluations</th>`)
	ks := checkpoints(c.n)
	for _, k := range ks {
		fmt.Fprintf(b, `<td>%d</td>`, k)
	}
	b.WriteString(`</tr><tr><th>fraction of best known</th>`)
	for _, k := range ks {
		fmt.Fprintf(b, `<td>%.3f</td>`, c.fraction(k))
	}
	b.WriteString(`</tr></table>`)
	servedFlag(b, j)
}

// cyclesTable lists the job's cycles.
func cyclesTable(b *strings.Builder, j *job) {
	if len(j.cycles) == 0 {
		return
	}
	b.WriteString(`<table class="plain"><thead><tr><th>cycle</th><th>trigger</th><th>state</th><th>started</th><th>evals</th><th>best ms</th><th>promoted</th><th>strategy</th><th>allocation</th></tr></thead><tbody>`)
	for _, c := range j.cycles {
		best := "–"
		if c.BestMS > 0 {
			best = num(c.BestMS)
		}
		evals := strconv.Itoa(c.Evals)
		if c.Budget > 0 {
			evals += "/" + strconv.Itoa(c.Budget)
		}
		var alloc []string
		for _, m := range members([]api.Cycle{c}) {
			alloc = append(alloc, m+" "+strconv.Itoa(c.Allocation[m]))
		}
		state := c.State
		if c.Error != "" {
			state += ": " + c.Error
		}
		fmt.Fprintf(b, `<tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
			c.ID, esc(c.Trigger), esc(state), esc(c.Started.UTC().Format("2006-01-02 15:04:05")), evals, best, esc(c.Promoted), esc(c.Strategy), esc(strings.Join(alloc, ", ")))
	}
	b.WriteString(`</tbody></table>`)
}
