package cli

import (
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
)

func newCyclesCommand(g *globalOptions) *cobra.Command {
	var problem string
	cmd := &cobra.Command{
		Use:   "cycles KERNEL [--problem P]",
		Short: "List a kernel's tuning cycles, running and past",
		Long: `cycles lists a kernel's tuning cycles, running and past, one line each:
when it started and how long it ran, its evaluations, its best config and
that config's time as the search measured it (BEST_MS: the best trial of the
cycle that passed its checks; a config certification found wrong is never
best), the config it promoted, how the portfolio split its evaluations, and
how long it waited for an idle device. The time a promoted config is served
at is its certificate's (quasimctl config).`,
		Args: exactArgs(1, "KERNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := g.client(cmd).CyclesOf(cmd.Context(), args[0], problem)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), cs)
			}
			return printCycles(cmd.OutOrStdout(), cs.Cycles, time.Now())
		},
	}
	cmd.Flags().StringVar(&problem, "problem", "", "only this problem size")
	return cmd
}

// fmtAllocation writes an allocation as name=n pairs, largest first.
func fmtAllocation(a map[string]int) string {
	names := make([]string, 0, len(a))
	for n := range a {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if a[names[i]] != a[names[j]] {
			return a[names[i]] > a[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.Itoa(a[n])
	}
	return strings.Join(parts, ",")
}

// printCycles writes cycles as a table; now dates the running ones.
func printCycles(w io.Writer, cycles []api.Cycle, now time.Time) error {
	t := newTable(w, "ID", "PROBLEM", "DEVICE", "TRIGGER", "STATE", "STARTED", "DURATION", "EVALS", "BEST_MS", "BEST_KEY", "PROMOTED", "ALLOCATION", "WAITED", "NOTE")
	for _, c := range cycles {
		end := now
		if c.Ended != nil {
			end = *c.Ended
		}
		evals := strconv.Itoa(c.Evals)
		if c.Budget > 0 {
			evals += "/" + strconv.Itoa(c.Budget)
		}
		waited := "-"
		if c.WaitedS > 0 {
			waited = fmtDuration(time.Duration(c.WaitedS * float64(time.Second)))
		}
		note := c.Error
		if c.Busy != "" {
			note = strings.TrimPrefix(note+"; ", "; ") + "device busy: " + c.Busy
		}
		if c.Budgeted != "" {
			note = strings.TrimPrefix(note+"; ", "; ") + "budget: " + c.Budgeted
		}
		if c.Unsaved {
			note = strings.TrimPrefix(note+"; ", "; ") + "not yet in the state file"
		}
		t.row(strconv.Itoa(c.ID), dash(c.Problem), dash(c.Device), dash(c.Trigger), dash(c.State), fmtTime(c.Started),
			fmtDuration(end.Sub(c.Started)), evals, fmtMS(c.BestMS, 4), dash(c.BestKey), dash(c.Promoted), dash(fmtAllocation(c.Allocation)), waited, dash(note))
	}
	return t.flush()
}
