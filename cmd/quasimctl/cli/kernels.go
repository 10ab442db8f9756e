package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

func newKernelsCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "kernels",
		Short: "List the kernels quasimd tunes and their jobs",
		Long: `kernels lists every kernel spec the daemon has loaded, one line per job
(problem size and device class), with the job's trial count and the config it
serves, as name=value per parameter, and its time (TIME_MS: the median of
its certificate's latency, measured after it was selected; the search's own
time is in quasimctl trials). A job marked
"foreign" holds trials this daemon does not tune (imported for another device
class or problem, or left by a former device): they are listed, exported and
warm-start the kernel's jobs. Jobs that a runtime's lookup added
(tune_on_miss) are listed after the table with who asked for them, and jobs
that warm-started with what they started from.`,
		Args: exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ks, err := g.client(cmd).Kernels(cmd.Context())
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), ks)
			}
			t := newTable(cmd.OutOrStdout(), "KERNEL", "EVALUATOR", "SCHEDULE", "PARAMS", "CONFIGS", "PROBLEM", "DEVICE", "TRIALS", "SERVED", "TIME_MS", "RUNNING")
			for _, k := range ks {
				head := []string{k.Name, dash(k.Evaluator), dash(k.Schedule), strconv.Itoa(len(k.Params)), strconv.Itoa(k.Configs)}
				if len(k.Jobs) == 0 {
					t.row(append(head, "-", "-", "0", "-", "-", "no")...)
					continue
				}
				for i, j := range k.Jobs {
					if i > 0 {
						head = []string{k.Name, "", "", "", ""}
					}
					served, ms := "-", "-"
					if j.Served != nil {
						served, ms = namedKey(j.Served.Key, k.Params), fmtMS(j.Served.TimeMS, 4)
					}
					running := "no"
					switch {
					case j.Running:
						running = "yes"
					case j.Foreign:
						running = "foreign" // stored trials this daemon does not tune
					}
					t.row(append(head, dash(j.Problem), dash(j.Device), strconv.Itoa(j.Trials), served, ms, running)...)
				}
			}
			if err := t.flush(); err != nil {
				return err
			}
			for _, k := range ks {
				for _, n := range k.Notes {
					fmt.Fprintf(cmd.OutOrStdout(), "note: %s: %s\n", k.Name, n)
				}
				for _, j := range k.Jobs {
					switch {
					case j.RequestedBy != "" && j.Foreign:
						fmt.Fprintf(cmd.OutOrStdout(), "%s %s: added by a lookup of %s (a nearest answer's config verified there)\n", k.Name, j.Problem, j.RequestedBy)
					case j.RequestedBy != "":
						fmt.Fprintf(cmd.OutOrStdout(), "%s %s: added by a lookup of %s (tune_on_miss)\n", k.Name, j.Problem, j.RequestedBy)
					}
					if p := j.Prior; p != nil {
						tier := priorTier[p.From]
						if tier == "" {
							tier = p.From
						}
						fmt.Fprintf(cmd.OutOrStdout(), "%s %s on %s: warm-started from %s, %d configs ranked by %s\n", k.Name, j.Problem, j.Device, tier, p.Ranked, strings.Join(p.Sources, ", "))
					}
				}
			}
			return nil
		},
	}
}

// priorTier says where a warm start's prior came from, by api.Prior.From.
var priorTier = map[string]string{
	"pack":  "a prior pack",
	"store": "this daemon's trials of the kernel elsewhere",
	"fleet": "the fleet's trials",
}
