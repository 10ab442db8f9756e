package cli

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
)

type configOptions struct {
	problem     string
	device      string
	objective   string
	maxSlowdown float64
}

func newConfigCommand(g *globalOptions) *cobra.Command {
	var o configOptions
	cmd := &cobra.Command{
		Use:   "config KERNEL [--problem P] [--device D] [--objective O [--max-slowdown F]]",
		Short: "Show the config a kernel runtime would get",
		Long: `config asks quasimd which config a runtime of KERNEL should use at a problem
size on a device, exactly as the runtime would: the served config of that job,
else the one of the nearest tuned problem size, else the spec's default.

With --objective, the answer is chosen from the job's Pareto front of
certified (time, energy) configs: the one that minimises the objective (time,
energy, edp or a weighted sum such as "0.7*time + 0.3*energy") among those at
most --max-slowdown (a fraction) slower than the fastest; it shows the energy
saved against the fastest config and the slowdown paid for it.`,
		Example: `  quasimctl config sgemm --problem 1024,1024,1024
  quasimctl config gemm --objective energy --max-slowdown 0.05`,
		Args: exactArgs(1, "KERNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var cfg api.Config
			var err error
			switch {
			case o.objective != "":
				cfg, err = g.client(cmd).ConfigPolicy(cmd.Context(), args[0], o.problem, o.device, api.Policy{Objective: o.objective, MaxSlowdown: o.maxSlowdown})
			case cmd.Flags().Changed("max-slowdown"):
				return usagef("--max-slowdown needs --objective")
			default:
				cfg, err = g.client(cmd).Config(cmd.Context(), args[0], o.problem, o.device)
			}
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), cfg)
			}
			return printConfig(cmd, cfg)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.problem, "problem", "", "problem size, comma separated (e.g. 1024,1024,1024)")
	fs.StringVar(&o.device, "device", "", "device class (default: the daemon's device)")
	fs.StringVar(&o.objective, "objective", "", "choose from the job's (time, energy) front by this objective: time, energy, edp or a weighted sum")
	fs.Float64Var(&o.maxSlowdown, "max-slowdown", -1, "with --objective: at most this fraction slower than the fastest (e.g. 0.05); negative is no limit")
	return cmd
}

func printConfig(cmd *cobra.Command, cfg api.Config) error {
	w := cmd.OutOrStdout()
	t := newTable(w, "PARAM", "VALUE")
	names := make([]string, 0, len(cfg.Config))
	for n := range cfg.Config {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		t.row(n, fmtValue(cfg.Config[n]))
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	match := dash(string(cfg.Match))
	if cfg.Match == api.MatchNearest {
		match += " (from problem " + dash(cfg.From) + ", confidence " + strconv.FormatFloat(cfg.Confidence, 'f', 2, 64) + ")"
	}
	timeMS := fmtMS(cfg.TimeMS, 4)
	if cfg.TimeCILowMS > 0 && cfg.TimeCIHighMS > 0 {
		timeMS += " (95% CI " + fmtMS(cfg.TimeCILowMS, 4) + "–" + fmtMS(cfg.TimeCIHighMS, 4) + ", its certificate's)"
	}
	if cfg.DefaultMS > 0 && cfg.Speedup == nil {
		timeMS += " (default " + fmtMS(cfg.DefaultMS, 4) + " in the search)"
	}
	t = newTable(w)
	t.row("kernel:", cfg.Kernel)
	t.row("problem:", dash(cfg.Problem))
	t.row("device:", dash(cfg.Device))
	t.row("key:", dash(cfg.Key))
	t.row("match:", match)
	t.row("time_ms:", timeMS)
	if x := cfg.Speedup; x != nil {
		t.row("speed-up:", fmtRatio(x.Ratio, x.Low, x.High)+" over the default "+x.Baseline+fmt.Sprintf(" (%d paired rounds)", x.Rounds))
	}
	cert := dash(cfg.Certificate)
	if cfg.CertifiedFor != "" && cfg.CertifiedFor != cfg.Problem {
		cert += " (issued for problem " + cfg.CertifiedFor + ", not verified at this one)"
	}
	t.row("certificate:", cert)
	if cfg.Source != "" {
		t.row("source:", cfg.Source+" (issuer "+dash(cfg.Issuer)+")")
	}
	if cfg.Verification != "" {
		t.row("verification:", cfg.Verification)
	}
	if f := cfg.Front; f != nil {
		t.row("objective:", f.Objective+" over a front of "+strconv.Itoa(f.Points)+" certified configs")
		t.row("energy_mj:", fmtMS(f.EnergyMJ, 4))
		t.row("fastest:", f.FastestKey+" ("+fmtMS(f.FastestMS, 4)+" ms, "+fmtMS(f.FastestEnergyMJ, 4)+" mJ)")
		t.row("vs fastest:", fmt.Sprintf("%.1f%% slower, %.1f%% less energy", 100*f.Slowdown, 100*f.EnergySaved))
	}
	if cfg.Note != "" {
		t.row("note:", cfg.Note)
	}
	if cfg.PromotedAt != nil {
		t.row("promoted:", fmtTime(*cfg.PromotedAt))
	}
	return t.flush()
}
