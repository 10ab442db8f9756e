package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/quasim/quasim/api"
)

// progress shows the cycles tune --wait follows, one line per job. On a
// terminal the lines are redrawn in place at each poll; elsewhere (a pipe,
// a log) a job's line is printed again only when its progress changes, so
// the output reads as a history.
type progress struct {
	w     io.Writer
	tty   bool
	jobs  []string          // in the order the tune request named them
	lines map[string]string // by job: what it shows now
	keys  map[string]string // by job: what last changed, without the ETA
	drawn int               // lines on the terminal from the last draw
}

func newProgress(w io.Writer, jobs []string) *progress {
	return &progress{w: w, tty: isTerminal(w), jobs: jobs, lines: map[string]string{}, keys: map[string]string{}}
}

// isTerminal reports whether w is a terminal that understands cursor moves.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isatty.IsTerminal(f.Fd())
}

// set makes line what job shows; key is what must change for a line to be
// printed again when not on a terminal, and final lines (a cycle that
// ended) only show on a terminal, where they replace the progress.
func (p *progress) set(job, line, key string, final bool) {
	p.lines[job] = line
	if p.tty || final || p.keys[job] == key {
		return
	}
	p.keys[job] = key
	fmt.Fprintln(p.w, line)
}

// draw redraws every job's line in place on a terminal.
func (p *progress) draw() {
	if !p.tty {
		return
	}
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn) // back to the first line
	}
	n := 0
	for _, j := range p.jobs {
		if l, ok := p.lines[j]; ok {
			b.WriteString("\r\x1b[2K" + l + "\n")
			n++
		}
	}
	p.drawn = n
	io.WriteString(p.w, b.String())
}

// show sets a job's line from its cycle.
func (p *progress) show(cy api.Cycle, now time.Time) {
	switch cy.State {
	case "running":
		p.set(cy.Job, progressLine(cy, now), fmt.Sprint(cy.ID, cy.State, cy.Evals, cy.BestMS), false)
	case "waiting":
		p.set(cy.Job, waitingLine(cy), fmt.Sprint(cy.ID, cy.State), false)
	default:
		p.set(cy.Job, endLine(cy), "", true)
	}
}

// waitingLine is "reduce 65536: waiting for an idle device (CPU load of
// other processes 1.98 above 0.30; quasimd --idle-cpu 0 turns the wait
// off), 0/6 evals, waited 12s".
func waitingLine(cy api.Cycle) string {
	s := cycleName(cy) + ": waiting for an idle device"
	if cy.Busy != "" {
		s += " (" + cy.Busy + "; " + idleHint(cy.Busy) + ")"
	}
	s += ", " + evalsDone(cy) + " evals"
	if cy.WaitedS > 0 {
		s += ", waited " + (time.Duration(cy.WaitedS * float64(time.Second))).Round(time.Second).String()
	}
	return s
}

// idleHint says which quasimd flag sets the busy threshold that busy
// reports, so a first tune on a busy machine does not wait without a clue.
func idleHint(busy string) string {
	flag := "--idle-cpu"
	if strings.HasPrefix(busy, "GPU") {
		flag = "--idle-gpu"
	}
	return "quasimd " + flag + " 0 turns the wait off"
}

// endLine is "sgemm 256,256,256: done, 20/20 evals, best 4.21 ms".
func endLine(cy api.Cycle) string {
	s := cycleName(cy) + ": " + cy.State + ", " + evalsDone(cy) + " evals, best "
	if cy.BestMS > 0 {
		return s + fmtMS(cy.BestMS, 3) + " ms"
	}
	return s + "-"
}

// cycleName is "sgemm 256,256,256".
func cycleName(cy api.Cycle) string {
	if cy.Problem == "" {
		return cy.Kernel
	}
	return cy.Kernel + " " + cy.Problem
}

// evalsDone is "12/20", or "12" without an evaluation budget.
func evalsDone(cy api.Cycle) string {
	s := strconv.Itoa(cy.Evals)
	if cy.Budget > 0 {
		s += "/" + strconv.Itoa(cy.Budget)
	}
	return s
}

// progressLine is "sgemm 256,256,256: 12/20 evals, best 4.21 ms, ETA 6s".
func progressLine(cy api.Cycle, now time.Time) string {
	var b strings.Builder
	b.WriteString(cycleName(cy) + ": " + evalsDone(cy) + " evals, best ")
	if cy.BestMS > 0 {
		b.WriteString(fmtMS(cy.BestMS, 3) + " ms")
	} else {
		b.WriteString("-")
	}
	if eta, ok := cycleETA(cy, now); ok {
		b.WriteString(", ETA " + eta.String())
	}
	return b.String()
}

// cycleETA estimates a running cycle's time left: elapsed/evals*(budget-evals),
// capped by what is left of a time budget. Time spent waiting for an idle
// device is not elapsed tuning time.
func cycleETA(cy api.Cycle, now time.Time) (time.Duration, bool) {
	elapsed := max(now.Sub(cy.Started)-time.Duration(cy.WaitedS*float64(time.Second)), 0)
	var eta time.Duration
	ok := false
	if cy.Budget > 0 && cy.Evals > 0 {
		eta = elapsed / time.Duration(cy.Evals) * time.Duration(max(cy.Budget-cy.Evals, 0))
		ok = true
	}
	if cy.BudgetS > 0 {
		left := max(time.Duration(cy.BudgetS*float64(time.Second))-elapsed, 0)
		if !ok || left < eta {
			eta, ok = left, true
		}
	}
	return eta.Round(time.Second), ok
}
