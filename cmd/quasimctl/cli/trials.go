package cli

import (
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
		Long: `trials lists every stored trial of KERNEL: the config key, its status (ok,
invalid, compile, runtime, timeout, wrong_result, constraints), its time, what
measuring it cost, when, for which job, and in which cycle ("import" for
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
			t := newTable(cmd.OutOrStdout(), "KEY", "STATUS", "TIME_MS", "COST_S", "AT", "PROBLEM", "DEVICE", "CYCLE")
			for _, x := range tr.Trials {
				cycle := "import"
				if x.Cycle != 0 {
					cycle = strconv.Itoa(x.Cycle)
				}
				t.row(x.Key, dash(x.Status), fmtMS(x.TimeMS, 4), fmtSig(x.CostS, 3), fmtTime(x.At), dash(x.Problem), dash(x.Device), cycle)
			}
			return t.flush()
		},
	}
	cmd.Flags().StringVar(&o.problem, "problem", "", "only this problem size")
	return cmd
}
