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

With --wait it follows the new cycles, printing their progress on stderr,
until none is running, then prints how each ended. It exits with status 1 if
a cycle failed or was cancelled. Interrupting the wait (or --timeout) leaves
the cycles running in quasimd.`,
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
	sent := time.Now()
	resp, err := c.Tune(ctx, kernel, api.TuneRequest{Problem: o.problem, Budget: o.budget})
	if err != nil {
		return timeoutError(cmd, err, o.timeout, "tune "+kernel)
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
	cycles, err := waitCycles(ctx, cmd.ErrOrStderr(), c, kernel, resp.Jobs, sent, o.poll)
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
	var bad []string
	for _, cy := range cycles {
		if cy.State == "failed" || cy.State == "cancelled" {
			s := fmt.Sprintf("cycle %d (%s) %s", cy.ID, cy.Problem, cy.State)
			if cy.Error != "" {
				s += ": " + cy.Error
			}
			bad = append(bad, s)
		}
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
		return fmt.Errorf("%s: gave up after --timeout %s (cycles go on in quasimd)", what, timeout)
	}
	return err
}

// waitCycles polls kernel's cycles every poll until each of jobs has a cycle
// started since sent and none of those is running; it prints progress to
// stderr when a cycle's evaluations or best time change, and returns those
// cycles.
func waitCycles(ctx context.Context, stderr io.Writer, c *client.Client, kernel string, jobs []string, sent time.Time, poll time.Duration) ([]api.Cycle, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	want := map[string]bool{}
	for _, j := range jobs {
		want[j] = true
	}
	// A daemon may store start times to the second.
	since := sent.Truncate(time.Second)
	printed := map[string]string{} // by job and cycle: what was last printed
	waiting := map[string]bool{}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for first := true; ; first = false {
		cs, err := c.Cycles(ctx, kernel)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		var mine []api.Cycle
		started := map[string]bool{}
		running := false
		for _, cy := range cs.Cycles {
			if !want[cy.Job] || cy.Started.Before(since) {
				continue
			}
			mine = append(mine, cy)
			started[cy.Job] = true
			if cy.State != "running" {
				continue
			}
			running = true
			if cy.Kernel == "" {
				cy.Kernel = kernel
			}
			id := cy.Job + "#" + strconv.Itoa(cy.ID)
			if key := fmt.Sprint(cy.Evals, cy.BestMS); printed[id] != key {
				printed[id] = key
				fmt.Fprintln(stderr, progressLine(cy, now))
			}
		}
		if !running && len(started) == len(want) {
			return mine, nil
		}
		for _, j := range jobs {
			if !started[j] && !waiting[j] && !first {
				waiting[j] = true
				fmt.Fprintf(stderr, "%s: waiting for the cycle of job %s to start\n", kernel, j)
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// progressLine is "sgemm 256,256,256: 12/20 evals, best 4.21 ms, ETA 6s".
func progressLine(cy api.Cycle, now time.Time) string {
	var b strings.Builder
	b.WriteString(cy.Kernel)
	if cy.Problem != "" {
		b.WriteString(" " + cy.Problem)
	}
	b.WriteString(": " + strconv.Itoa(cy.Evals))
	if cy.Budget > 0 {
		b.WriteString("/" + strconv.Itoa(cy.Budget))
	}
	b.WriteString(" evals, best ")
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
// capped by what is left of a time budget.
func cycleETA(cy api.Cycle, now time.Time) (time.Duration, bool) {
	elapsed := max(now.Sub(cy.Started), 0)
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
