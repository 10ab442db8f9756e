package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
)

func newZoningCommand(g *globalOptions) *cobra.Command {
	var (
		retune bool
		wait   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "zoning PIPELINE",
		Short: "Show a zoned pipeline's precision map, tuned jointly against one error budget",
		Long: `zoning shows the precision map quasimd tuned for a pipeline file's zoning
section: a chain of kernels (a conv2d or sgemm feeding a reduce) whose
precision parameters are chosen together under one error budget for the
chain's output. Each map's a-priori bound composes the stages' bounds (the
upstream's error passes through the sum) and its measured error is against
the float64 reference of the whole chain; the map served is the fastest
whose both fit. It also shows the stages' own configs and what budgets
split evenly between the kernels would serve, the served map's
certificate (quasimctl certs verify ID checks it), and the maps revoked
because a runtime observed an error above a stage's certified bound. A
tuned map is kept in the state file: a restart serves it again without
measuring while the zoning section and the kernels' served configs stay.

  quasimctl zoning PIPELINE [--retune] [--wait 2m] [--json]`,
		Args: exactArgs(1, "PIPELINE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := g.client(cmd)
			ctx := cmd.Context()
			var (
				z   api.Zoning
				err error
			)
			if retune {
				z, err = c.Rezone(ctx, args[0])
			} else {
				z, err = c.Zoning(ctx, args[0])
			}
			for deadline := time.Now().Add(wait); err == nil && z.State == api.ZoningTuning && time.Now().Before(deadline); {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(250 * time.Millisecond):
				}
				z, err = c.Zoning(ctx, args[0])
			}
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), z)
			}
			return printZoning(cmd.OutOrStdout(), z)
		},
	}
	cmd.Flags().BoolVar(&retune, "retune", false, "tune the map again now")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for a tuning in progress to end")
	return cmd
}

func printZoning(w io.Writer, z api.Zoning) error {
	fmt.Fprintf(w, "pipeline %s: chain %s, budget %s %g (%s inputs)\n", z.Pipeline, strings.Join(z.Chain, " -> "), z.Budget.Kind, z.Budget.Value, z.Inputs)
	for _, k := range z.Revoked {
		fmt.Fprintf(w, "revoked, never served again: %s\n", k)
	}
	switch z.State {
	case api.ZoningTuning:
		fmt.Fprintln(w, "tuning")
		if z.Map == nil {
			return nil
		}
		fmt.Fprintln(w, "served until the tuning is done:")
	case api.ZoningFailed:
		fmt.Fprintf(w, "failed: %s\n", z.Error)
		return nil
	}
	fmt.Fprintf(w, "%d maps checked on seeds %v, %d certified\n", z.Maps, z.Seeds, z.Passed)
	for _, n := range z.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if z.Error != "" {
		fmt.Fprintf(w, "error: %s\n", z.Error)
	}
	if z.CertificateID != "" {
		restored := ""
		if z.Restored {
			restored = " (restored from the state file, not measured again)"
		}
		fmt.Fprintf(w, "certificate %s%s\n", z.CertificateID, restored)
	}
	t := newTable(w, "", "map", "bound", "measured", "ms")
	row := func(label string, m *api.ZoneMap) {
		if m == nil {
			t.row(label, "none fits", "", "", "")
			return
		}
		var parts []string
		for _, s := range m.Stages {
			var ps []string
			for _, k := range slices.Sorted(maps.Keys(s.Precision)) {
				ps = append(ps, k+"="+s.Precision[k])
			}
			parts = append(parts, fmt.Sprintf("%s{%s} %.3g", s.Kernel, strings.Join(ps, ","), s.Bound))
		}
		t.row(label, strings.Join(parts, " | "), fmt.Sprintf("%.3g", m.Bound), fmt.Sprintf("%.3g", m.Measured), fmtMS(m.TimeMS, 3))
	}
	row("served", z.Map)
	row("even split", z.Split)
	row("own configs", z.Default)
	if err := t.flush(); err != nil {
		return err
	}
	if z.Map != nil {
		// What a runtime checks each stage's output against (docs/kernel-authors/precision.md,
		// Zoning a pipeline).
		for _, s := range z.Map.Stages {
			fmt.Fprintf(w, "runtime limit: %s at %s %s: error %.3g %s\n", s.Kernel, s.Problem, s.Key, s.Limit, s.Unit)
		}
	}
	return nil
}
