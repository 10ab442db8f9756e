package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func newStatusCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the daemon's version, uptime, directories, counts and stale jobs",
		Args:  exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := g.client(cmd).Status(cmd.Context())
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if g.json {
				return printJSON(w, st)
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
			return nil
		},
	}
}
