package cli

import (
	"slices"
	"strconv"

	"github.com/spf13/cobra"
)

type trialsOptions struct {
	problem string
}

func newTrialsCommand(g *globalOptions) *cobra.Command {
	var o trialsOptions
	cmd := &cobra.Command{
		Use:   "trials KERNEL [--problem P]",
		Short: "List a kernel's measured configs",
		Long: `trials lists every stored trial of KERNEL: the config (a column per
parameter, headed by its name), its status (ok, invalid, compile, runtime,
timeout, wrong_result, constraints), its time, what measuring it cost, when,
for which job, and in which cycle ("import" for
trials imported from a recording).`,
		Args: exactArgs(1, "KERNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			tr, err := g.client(cmd).Trials(cmd.Context(), args[0], o.problem)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), tr)
			}
			// One column per parameter, named, where the kernel's
			// parameters are known and every key splits into them.
			params := kernelParams(cmd, g, args[0])
			for _, x := range tr.Trials {
				if keyValues(x.Key, params) == nil {
					params = nil
				}
			}
			header := append(slices.Clone(params), "STATUS", "TIME_MS", "COST_S", "AT", "PROBLEM", "DEVICE", "CYCLE")
			if params == nil {
				header = append([]string{"KEY"}, header...)
			}
			t := newTable(cmd.OutOrStdout(), header...)
			for _, x := range tr.Trials {
				cycle := "import"
				if x.Cycle != 0 {
					cycle = strconv.Itoa(x.Cycle)
				}
				cfg := keyValues(x.Key, params)
				if params == nil {
					cfg = []string{x.Key}
				}
				t.row(append(cfg, dash(x.Status), fmtMS(x.TimeMS, 4), fmtSig(x.CostS, 3), fmtTime(x.At), dash(x.Problem), dash(x.Device), cycle)...)
			}
			return t.flush()
		},
	}
	cmd.Flags().StringVar(&o.problem, "problem", "", "only this problem size")
	return cmd
}

// kernelParams is the parameter names of kernel, in key order; nil where
// the daemon does not say.
func kernelParams(cmd *cobra.Command, g *globalOptions, kernel string) []string {
	ks, err := g.client(cmd).Kernels(cmd.Context())
	if err != nil {
		return nil
	}
	for _, k := range ks {
		if k.Name == kernel {
			return k.Params
		}
	}
	return nil
}
