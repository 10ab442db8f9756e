package cli

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
)

type trialsOptions struct {
	problem string
	limit   int
	cursor  string
	all     bool
}

func newTrialsCommand(g *globalOptions) *cobra.Command {
	var o trialsOptions
	cmd := &cobra.Command{
		Use:   "trials KERNEL [--problem P] [--limit N | --all] [--cursor C]",
		Short: "List a kernel's measured configs",
		Long: `trials lists the stored trials of KERNEL: the config (a column per
parameter, headed by its name), its status (ok, invalid, compile, runtime,
timeout, wrong_result, constraints), its time, what measuring it cost, when,
for which job, and in which cycle ("import" for trials imported from a
recording).

It lists one page, the first --limit trials (default ` + strconv.Itoa(api.DefaultTrialsLimit) + `), and when more
follow says so on stderr with the --cursor that lists the next page;
--all lists every page.`,
		Args: exactArgs(1, "KERNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.limit < 1 || o.limit > api.MaxTrialsLimit {
				return usagef("--limit %d: want 1 to %d (or --all)", o.limit, api.MaxTrialsLimit)
			}
			c := g.client(cmd)
			var (
				tr  api.Trials
				err error
			)
			if o.all {
				if o.cursor != "" {
					return usagef("--all lists every page: it takes no --cursor")
				}
				tr, err = c.Trials(cmd.Context(), args[0], o.problem)
			} else {
				tr, err = c.TrialsPage(cmd.Context(), args[0], o.problem, o.limit, o.cursor)
			}
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), tr)
			}
			// One column per parameter, named, where the kernel's
			// parameters are known and every key splits into them.
			params := tr.Params
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
			if err := t.flush(); err != nil {
				return err
			}
			if tr.Next != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "more trials follow: --cursor %s for the next page, or --all\n", tr.Next)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.problem, "problem", "", "only this problem size")
	cmd.Flags().IntVar(&o.limit, "limit", api.DefaultTrialsLimit, "list at most this many trials")
	cmd.Flags().StringVar(&o.cursor, "cursor", "", "list the page that starts here (printed after the page before)")
	cmd.Flags().BoolVar(&o.all, "all", false, "list every trial, page after page")
	return cmd
}
