package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
)

type tuneOptions struct {
	problem string
	budget  int
	wait    bool
	timeout time.Duration
	poll    time.Duration
}

func newTuneCommand(g *globalOptions) *cobra.Command {
	var o tuneOptions
	cmd := &cobra.Command{
		Use:   "tune KERNEL [--problem P] [--budget N] [--wait] [--timeout D]",
		Short: "Start tuning a kernel now",
		Long: `tune asks quasimd to start a tuning cycle of KERNEL now, for one problem size
or (without --problem) every problem of the kernel, and prints the jobs it
queued.

With --wait it follows the new cycles until each has ended, then prints how
each ended. A cycle waiting for its device to be idle of other work is
followed too, and shown as waiting. Progress goes to stderr: on a terminal
one line per job (evaluations, best time, ETA), redrawn in place; otherwise
a line whenever a job's progress changes. It exits with status 1 unless
every cycle is done (failed, skipped for a busy device, or interrupted), and
when --timeout runs out, saying what each job was still doing. Interrupting
the wait (or --timeout) leaves the cycles running in quasimd.`,
		Example: `  quasimctl tune sgemm --problem 256,256,256 --budget 20 --wait`,
		Args:    exactArgs(1, "KERNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTune(cmd, g, o, args[0])
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.problem, "problem", "", "problem size, comma separated (default: every problem of the kernel)")
	fs.IntVar(&o.budget, "budget", 0, "evaluations per cycle (default: the spec's budget)")
	fs.BoolVar(&o.wait, "wait", false, "follow the cycles until they end")
	fs.DurationVar(&o.timeout, "timeout", 0, "give up after this long (0: never)")
	fs.DurationVar(&o.poll, "poll", 500*time.Millisecond, "how often --wait asks for progress")
	fs.MarkHidden("poll")
	return cmd
}

func runTune(cmd *cobra.Command, g *globalOptions, o tuneOptions, kernel string) error {
	if o.budget < 0 {
		return usagef("--budget must not be negative")
	}
	if o.timeout < 0 || o.poll <= 0 {
		return usagef("--timeout must not be negative and --poll must be positive")
	}
	ctx := cmd.Context()
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	c := g.client(cmd)
	out := cmd.OutOrStdout()
	var base map[string]baseline
	var baseErr error
	if o.wait {
		base, baseErr = baselines(ctx, c, kernel)
	}
	sent := time.Now()
	resp, err := c.Tune(ctx, kernel, api.TuneRequest{Problem: o.problem, Budget: o.budget})
	if err != nil {
		return timeoutError(cmd, err, o.timeout, "tune "+kernel)
	}
	if baseErr != nil {
		return fmt.Errorf("tune %s: queued, but its cycles cannot be followed: %w", kernel, baseErr)
	}
	if !o.wait {
		if g.json {
			return printJSON(out, resp)
		}
		fmt.Fprintf(out, "queued %d jobs of %s\n", len(resp.Jobs), kernel)
		for _, j := range resp.Jobs {
			fmt.Fprintf(out, "  %s\n", j)
		}
		return nil
	}
	cycles, err := waitCycles(ctx, cmd.ErrOrStderr(), c, kernel, resp.Jobs, base, sent, o.poll)
	if err != nil {
		return timeoutError(cmd, err, o.timeout, "wait for the cycles of "+kernel)
	}
	if g.json {
		err = printJSON(out, api.Cycles{Kernel: kernel, Cycles: cycles})
	} else {
		err = printTuneResult(out, cycles)
	}
	if err != nil {
		return err
	}
	// Only the last cycle of each job counts: an earlier one ended and a
	// queued one followed.
	last := map[string]api.Cycle{}
	for _, cy := range cycles {
		if cy.ID >= last[cy.Job].ID {
			last[cy.Job] = cy
		}
	}
	var bad []string
	for _, j := range resp.Jobs {
		cy, ok := last[j]
		if !ok || cy.State == "done" {
			continue
		}
		s := fmt.Sprintf("cycle %d (%s) %s", cy.ID, cy.Problem, cy.State)
		switch {
		case cy.Error != "":
			s += ": " + cy.Error
		case cy.Busy != "":
			s += ": device busy: " + cy.Busy + " (" + idleHint(cy.Busy) + ")"
		}
		if cy.State == "interrupted" {
			s += " (its next start resumes it)"
		}
		bad = append(bad, s)
	}
	if len(bad) > 0 {
		return fmt.Errorf("tune %s: %s", kernel, strings.Join(bad, "; "))
	}
	return nil
}

// timeoutError says that --timeout ran out, rather than "context deadline
// exceeded".
func timeoutError(cmd *cobra.Command, err error, timeout time.Duration, what string) error {
	if errors.Is(err, context.DeadlineExceeded) && cmd.Context().Err() == nil && timeout > 0 {
		msg := fmt.Sprintf("%s: gave up after --timeout %s (cycles go on in quasimd)", what, timeout)
		var we *waitError
		if errors.As(err, &we) && we.pending != "" {
			msg += ": " + we.pending
		}
		return errors.New(msg)
	}
	return err
}

// waitError is a wait cut short, with what the cycles were doing.
type waitError struct {
	err     error
	pending string
}

func (e *waitError) Error() string { return e.err.Error() + ": " + e.pending }
func (e *waitError) Unwrap() error { return e.err }

// baseline is a job's newest cycle before a tune request: the request's
// cycle is a later one, or this one resumed when it was interrupted.
type baseline struct {
	id    int
	state string
}

// baselines reads the newest cycle of each of kernel's jobs.
func baselines(ctx context.Context, c *client.Client, kernel string) (map[string]baseline, error) {
	cs, err := c.Cycles(ctx, kernel)
	if err != nil {
		return nil, err
	}
	out := map[string]baseline{}
	for _, cy := range cs.Cycles {
		if cy.ID >= out[cy.Job].id {
			out[cy.Job] = baseline{cy.ID, cy.State}
		}
	}
	return out, nil
}

// ours reports whether cy is a cycle the tune request sent at sent started:
// one newer than the job's baseline and started since, or the baseline's
// interrupted cycle resumed (it keeps its ID and start time).
func (b baseline) ours(cy api.Cycle, sent time.Time) bool {
	if cy.ID > b.id {
		// A daemon may store start times to the second.
		return !cy.Started.Before(sent.Truncate(time.Second))
	}
	return cy.ID == b.id && b.state == "interrupted" && cy.State != "interrupted"
}

// inFlight reports whether a cycle has yet to end: measuring, or waiting
// for its device to be idle of other work.
func inFlight(cy api.Cycle) bool { return cy.State == "running" || cy.State == "waiting" }

// waitCycles polls kernel's cycles every poll until each of jobs has a cycle
// of the tune request (see baseline) and none of those is in flight; it shows
// their progress on stderr (see progress) and returns those cycles. When ctx
// ends first, its error says what each job was doing.
func waitCycles(ctx context.Context, stderr io.Writer, c *client.Client, kernel string, jobs []string, base map[string]baseline, sent time.Time, poll time.Duration) ([]api.Cycle, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	want := map[string]bool{}
	for _, j := range jobs {
		want[j] = true
	}
	p := newProgress(stderr, jobs)
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var latest map[string]api.Cycle // by job: its newest cycle of the request
	for first := true; ; first = false {
		cs, err := c.Cycles(ctx, kernel)
		if err != nil {
			if ctx.Err() != nil {
				return nil, &waitError{err, pending(jobs, latest)}
			}
			return nil, err
		}
		now := time.Now()
		var mine []api.Cycle
		latest = map[string]api.Cycle{}
		flying := false
		for _, cy := range cs.Cycles {
			if !want[cy.Job] || !base[cy.Job].ours(cy, sent) {
				continue
			}
			if cy.Kernel == "" {
				cy.Kernel = kernel
			}
			mine = append(mine, cy)
			if cy.ID >= latest[cy.Job].ID {
				latest[cy.Job] = cy
			}
			flying = flying || inFlight(cy)
		}
		for _, j := range jobs {
			if cy, ok := latest[j]; ok {
				p.show(cy, now)
			} else if !first {
				p.set(j, fmt.Sprintf("%s: waiting for the cycle of job %s to start", kernel, j), "start", false)
			}
		}
		p.draw()
		if !flying && len(latest) == len(want) {
			return mine, nil
		}
		select {
		case <-ctx.Done():
			return mine, &waitError{ctx.Err(), pending(jobs, latest)}
		case <-tick.C:
		}
	}
}

// pending says what each job not yet ended was doing: "cycle 3 (65536)
// waiting for an idle device: CPU load ...", "job J: cycle not started".
func pending(jobs []string, latest map[string]api.Cycle) string {
	var out []string
	for _, j := range jobs {
		cy, ok := latest[j]
		switch {
		case !ok:
			out = append(out, "job "+j+": cycle not started")
		case cy.State == "waiting":
			s := fmt.Sprintf("cycle %d (%s) waiting for an idle device", cy.ID, cy.Problem)
			if cy.Busy != "" {
				s += ": " + cy.Busy + " (" + idleHint(cy.Busy) + ")"
			}
			out = append(out, s)
		case cy.State == "running":
			out = append(out, fmt.Sprintf("cycle %d (%s) running, %s evals", cy.ID, cy.Problem, evalsDone(cy)))
		}
	}
	return strings.Join(out, "; ")
}

// printTuneResult prints how each waited-for cycle ended.
func printTuneResult(w io.Writer, cycles []api.Cycle) error {
	if len(cycles) == 0 {
		fmt.Fprintln(w, "no cycles")
		return nil
	}
	t := newTable(w, "CYCLE", "PROBLEM", "DEVICE", "STATE", "EVALS", "BEST_MS", "BEST_KEY", "PROMOTED", "ERROR")
	for _, cy := range cycles {
		t.row(strconv.Itoa(cy.ID), dash(cy.Problem), dash(cy.Device), dash(cy.State), strconv.Itoa(cy.Evals),
			fmtMS(cy.BestMS, 4), dash(cy.BestKey), dash(cy.Promoted), dash(cy.Error))
	}
	return t.flush()
}
