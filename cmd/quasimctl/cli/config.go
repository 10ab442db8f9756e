package cli

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
)

type configOptions struct {
	problem string
	device  string
}

func newConfigCommand(g *globalOptions) *cobra.Command {
	var o configOptions
	cmd := &cobra.Command{
		Use:   "config KERNEL [--problem P] [--device D]",
		Short: "Show the config a kernel runtime would get",
		Long: `config asks quasimd which config a runtime of KERNEL should use at a problem
size on a device, exactly as the runtime would: the served config of that job,
else the one of the nearest tuned problem size, else the spec's default.`,
		Example: `  quasimctl config sgemm --problem 1024,1024,1024`,
		Args:    exactArgs(1, "KERNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.client(cmd).Config(cmd.Context(), args[0], o.problem, o.device)
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
	if cfg.DefaultMS > 0 {
		timeMS += " (default " + fmtMS(cfg.DefaultMS, 4) + ")"
	}
	t = newTable(w)
	t.row("kernel:", cfg.Kernel)
	t.row("problem:", dash(cfg.Problem))
	t.row("device:", dash(cfg.Device))
	t.row("key:", dash(cfg.Key))
	t.row("match:", match)
	t.row("time_ms:", timeMS)
	t.row("certificate:", dash(cfg.Certificate))
	if cfg.PromotedAt != nil {
		t.row("promoted:", fmtTime(*cfg.PromotedAt))
	}
	return t.flush()
}
