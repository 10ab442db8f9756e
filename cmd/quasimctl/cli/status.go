package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
)

func newStatusCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the daemon's version, uptime, directories, counts, and what is failing",
		Long: `Show the daemon's version, uptime, directories and counts, the jobs whose
newest cycle failed (with why), spec files that did not load, stale jobs, and
when a cycle last succeeded. Exits 6 when cycles fail or spec files did not
load, so it serves as a health check.`,
		Args: exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := g.client(cmd).Status(cmd.Context())
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if g.json {
				if err := printJSON(w, st); err != nil {
					return err
				}
				return unhealthy(st)
			}
			kv := func(k, v string) { fmt.Fprintf(w, "%-14s%s\n", k+":", v) }
			kv("version", dash(st.Version))
			uptime := fmtDuration(time.Duration(st.UptimeS * float64(time.Second)))
			if !st.Started.IsZero() {
				uptime += " (since " + fmtTime(st.Started) + ")"
			}
			kv("uptime", uptime)
			kv("state dir", dash(st.StateDir))
			kv("spec dir", dash(st.SpecDir))
			kv("kernels", strconv.Itoa(st.Kernels))
			kv("jobs", strconv.Itoa(st.Jobs))
			kv("trials", strconv.Itoa(st.Trials))
			kv("running", strconv.Itoa(len(st.Running)))
			for _, j := range st.Running {
				fmt.Fprintf(w, "  %s\n", j)
			}
			kv("waiting", strconv.Itoa(len(st.Waiting))+" (for an idle device)")
			for _, j := range st.Waiting {
				fmt.Fprintf(w, "  %s\n", j)
			}
			kv("stale", strconv.Itoa(len(st.Stale)))
			for _, sj := range st.Stale {
				fmt.Fprintf(w, "  %s since %s: %s\n", sj.Job, fmtTime(sj.Since), sj.Reason)
			}
			kv("pipelines", strconv.Itoa(len(st.Pipelines)))
			for _, p := range st.Pipelines {
				budget := "budget by influence"
				if !p.BudgetByInfluence {
					budget = "budget by influence off"
				}
				fmt.Fprintf(w, "  %s (%s): kernels %s; keeps %d spans, %d batches; %s\n",
					p.Name, p.Source, dash(strings.Join(p.Kernels, ", ")), p.RetainSpans, p.RetainBatches, budget)
			}
			kv("spec errors", strconv.Itoa(len(st.SpecError)))
			for _, e := range st.SpecError {
				fmt.Fprintf(w, "  %s\n", e)
			}
			last := "never"
			if st.LastSuccess != nil {
				last = fmtTime(*st.LastSuccess)
			}
			kv("last success", last)
			kv("failing", strconv.Itoa(len(st.Failing)))
			for _, f := range st.Failing {
				since := "never succeeded"
				if f.LastSuccess != nil {
					since = "last success " + fmtTime(*f.LastSuccess)
				}
				retry := ""
				if f.RetryAt != nil {
					retry = "; tried again at " + fmtTime(*f.RetryAt)
				}
				first := ""
				if !f.Since.IsZero() { // older daemons do not say
					first = "failing since " + fmtTime(f.Since) + ": "
				}
				fmt.Fprintf(w, "  %s: %scycle %d failed at %s (%s%s): %s\n", f.Job, first, f.Cycle, fmtTime(f.At), since, retry, f.Error)
			}
			return unhealthy(st)
		},
	}
}

// unhealthy is the error status exits 6 with when st is not healthy.
func unhealthy(st api.Status) error {
	if st.Healthy() {
		return nil
	}
	var why []string
	if n := len(st.Failing); n > 0 {
		why = append(why, fmt.Sprintf("%s failing (%s: %s)", plural(n, "job"), st.Failing[0].Job, st.Failing[0].Error))
	}
	if n := len(st.SpecError); n > 0 {
		why = append(why, plural(n, "spec file")+" did not load")
	}
	return exitCode{exitUnhealthy, errors.New(strings.Join(why, "; "))}
}
