package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
)

type checkOptions struct {
	runs     int
	baseline bool
	speedups bool
	last     bool
}

func newCausalCheckCommand(g *globalOptions) *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check PIPELINE [--runs N] [--baseline | --speedups] [--last]",
		Short: "Check the causal model by experiment: perturb the pipeline, compare predicted and measured",
		Long: `check asks quasimd to run a perturbation experiment on PIPELINE, which it
must be able to run itself: builtin, the builtin kernels' pipeline, or a
pipeline an exec harness declares (docs/kernel-authors/harness-protocol.md), at its jobs'
served configs. Each perturbation (a stage delayed, or run at
another config) runs --runs times, each time paired with a baseline
iteration; the model predicts each pair's change of end-to-end time from
the baseline's own spans. The table gives the predicted and measured change
in percent of end-to-end time, each a median with its 95% bootstrap
interval, and the error in points. quasimd keeps the experiment.

--baseline runs no perturbation: it measures the pipeline's end-to-end time
at the served configs. --speedups runs Coz's virtual speedup of each stage
of the builtin pipeline (20% faster: every other stream pauses a fifth of
the stage's time each time it runs, the pauses subtracted) beside a 1 ms
delay of it, in place of the default perturbations. --last prints the newest stored experiment instead
of running one.`,
		Example: `  quasimctl causal check builtin --runs 10`,
		Args:    exactArgs(1, "PIPELINE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := g.client(cmd)
			var ex api.Experiment
			if o.last {
				list, err := c.Experiments(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if len(list.Experiments) == 0 {
					return fmt.Errorf("pipeline %q has no experiments yet: %w", args[0], api.ErrNotFound)
				}
				ex = list.Experiments[0]
			} else {
				var err error
				if ex, err = c.Experiment(cmd.Context(), args[0], api.ExperimentRequest{Runs: o.runs, Baseline: o.baseline, Speedups: o.speedups}); err != nil {
					return err
				}
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), ex)
			}
			return printExperiment(cmd.OutOrStdout(), ex)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&o.runs, "runs", 0, "pairs per perturbation (default 10)")
	fs.BoolVar(&o.baseline, "baseline", false, "no perturbation: measure the end-to-end time only")
	fs.BoolVar(&o.speedups, "speedups", false, "Coz's virtual speedup of each stage, beside a delay of it (builtin pipeline)")
	fs.BoolVar(&o.last, "last", false, "print the newest stored experiment, run nothing")
	return cmd
}

// printExperiment writes an experiment as a table.
func printExperiment(w io.Writer, ex api.Experiment) error {
	fmt.Fprintf(w, "pipeline %s, experiment %d at %s, %.1f s\n", ex.Pipeline, ex.ID, fmtTime(ex.At), ex.TookS)
	st := newTable(w, "STAGE", "KERNEL", "PROBLEM", "STREAM", "AFTER", "CONFIG")
	for _, s := range ex.Stages {
		cfg := s.Config
		if s.Served {
			cfg += " (served)"
		}
		after := ""
		for i, a := range s.After {
			if i > 0 {
				after += ","
			}
			after += a
		}
		st.row(s.Name, s.Kernel, s.Problem, s.Stream, dash(after), cfg)
	}
	if err := st.flush(); err != nil {
		return err
	}
	b := ex.Baseline
	fmt.Fprintf(w, "baseline end to end: %.3f ms [95%% CI %.3f, %.3f] over %d iterations\n", b.Median, b.Lo, b.Hi, b.N)
	if len(ex.Results) == 0 {
		return nil
	}
	// The builtin pipeline times a config alone; an exec harness runs its
	// stages only in whole iterations (docs/kernel-authors/harness-protocol.md).
	timed := "alone"
	if ex.Pipeline != "builtin" {
		timed = "in the pipeline"
	}
	t := newTable(w, "PERTURBATION", "ON_PATH", "BASE_MS", "PREDICTED_%", "95%_CI", "MEASURED_%", "95%_CI", "ERROR_PTS", "CHECK")
	for _, r := range ex.Results {
		p := r.Perturbation
		what := fmt.Sprintf("%s +%gms (+%.2f late)", p.Stage, p.DelayMS, r.OvershootMS)
		switch {
		case p.Config != "":
			what = fmt.Sprintf("%s at %s (x%.2f %s)", p.Stage, p.Config, r.Scale, timed)
		case p.Speedup > 0:
			what = fmt.Sprintf("%s %g%% faster (virtual, %.2fms paused)", p.Stage, 100*p.Speedup, r.PausedMS)
		}
		check := "inside"
		switch {
		case r.Outside > ex.Tolerance:
			check = fmt.Sprintf("OUT by %.1f", r.Outside)
		case r.Outside > 0:
			check = fmt.Sprintf("within %.1f", r.Outside)
		}
		t.row(what, fmt.Sprintf("%.0f%%", 100*r.OnPath), fmt.Sprintf("%.2f", r.BaseMS),
			fmt.Sprintf("%+.1f", r.Predicted.Median), fmt.Sprintf("[%+.1f, %+.1f]", r.Predicted.Lo, r.Predicted.Hi),
			fmt.Sprintf("%+.1f", r.Measured.Median), fmt.Sprintf("[%+.1f, %+.1f]", r.Measured.Lo, r.Measured.Hi),
			fmt.Sprintf("%.1f", r.Error), check)
	}
	if err := t.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d perturbations x %d runs: mean error %.2f, worst %.2f points of end-to-end time; %d of %d inside the measured 95%% interval or within %.0f points of it\n",
		len(ex.Results), ex.Runs, ex.MeanError, ex.WorstError, ex.Within, len(ex.Results), ex.Tolerance)
	return err
}
