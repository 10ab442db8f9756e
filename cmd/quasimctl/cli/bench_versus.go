package cli

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/quasim/quasim/evolve"
)

const versusUsage = "pair every other strategy with this one seed by seed (the same seed's mean over the spaces, one minus the other) and print the mean difference, its spread over seeds and the seeds won"

// versusReport is each strategy paired with Base, seed by seed.
type versusReport struct {
	Base   string                   `json:"base"`
	Paired map[string]evolve.Paired `json:"paired"`
}

// checkVersus reports a --versus naming no strategy of the run.
func checkVersus(versus string, strategies []string) error {
	if versus != "" && !slices.Contains(strategies, versus) {
		return usagef("--versus %s: not among the strategies (%v)", versus, strategies)
	}
	return nil
}

func printVersus(w io.Writer, rep benchReport, order []string) {
	v := rep.Versus
	if v == nil {
		return
	}
	fmt.Fprintf(w, "\npaired with %s, seed by seed: mean difference of a seed's mean over the spaces, the spread (sd) of that difference over seeds, the standard error (sd/sqrt(seeds)), seeds won\n", v.Base)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "strategy\t\t" + kHead(rep.Ks)
	fmt.Fprintln(tw, head)
	for _, st := range order {
		p, ok := v.Paired[st]
		if !ok {
			continue
		}
		rows := [4]string{st + "\tdifference\t", "\tspread\t", "\tstd error\t", "\tseeds won\t"}
		for _, k := range rep.Ks {
			rows[0] += fmt.Sprintf("%+.3f\t", p.Diff[k])
			rows[1] += fmt.Sprintf("%.3f\t", p.SD[k])
			rows[2] += fmt.Sprintf("%.3f\t", p.SD[k]/math.Sqrt(float64(max(p.Seeds, 1))))
			rows[3] += fmt.Sprintf("%d/%d\t", p.Wins[k], p.Seeds)
		}
		for _, r := range rows {
			fmt.Fprintln(tw, r)
		}
	}
	tw.Flush()
}

// kHead is a table header's cells for ks: "k=25\tk=50\t...".
func kHead(ks []int) string {
	var b strings.Builder
	for _, k := range ks {
		b.WriteString("k=" + strconv.Itoa(k) + "\t")
	}
	return b.String()
}
