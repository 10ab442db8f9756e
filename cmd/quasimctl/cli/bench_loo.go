package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/quasim/quasim/evolve"
)

// looReport is leave-one-space-out selection among a strategy's variants.
type looReport struct {
	Strategy   string   `json:"strategy"`
	Candidates []string `json:"candidates"`
	evolve.LOO
}

// leaveOneOut selects among the variants of strategy in the report (the
// strategy itself and every "strategy:options") by leave-one-space-out.
func leaveOneOut(rep benchReport, order []string, strategy string) (*looReport, error) {
	var cands []string
	for _, st := range order {
		if st == strategy || strings.HasPrefix(st, strategy+":") {
			cands = append(cands, st)
		}
	}
	if len(cands) < 2 {
		return nil, usagef("--loo %s: the traces hold %d variant(s) of it (%s); leave-one-out needs two or more", strategy, len(cands), strings.Join(cands, ", "))
	}
	return &looReport{Strategy: strategy, Candidates: cands, LOO: evolve.LeaveOneOut(rep.Scores, cands, rep.Ks)}, nil
}

func printLOO(w io.Writer, rep benchReport) {
	l := rep.LOO
	if l == nil {
		return
	}
	fmt.Fprintf(w, "\nleave one space out among %d variants of %s (chosen by the mean of k=%s on the other spaces):\n",
		len(l.Candidates), l.Strategy, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(rep.Ks)), ","), "[]"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "\t"
	for _, k := range rep.Ks {
		head += fmt.Sprintf("k=%d\t", k)
	}
	fmt.Fprintln(tw, head)
	row := func(name string, at map[int]float64) {
		line := name + "\t"
		for _, k := range rep.Ks {
			line += fmt.Sprintf("%.3f\t", at[k])
		}
		fmt.Fprintln(tw, line)
	}
	row("held out (each space scored by the variant chosen without it)", l.Mean)
	row("in sample ("+l.InSample+", chosen on every space)", l.InSampleMean)
	tw.Flush()
	spaces := make([]string, 0, len(l.Chosen))
	for s := range l.Chosen {
		spaces = append(spaces, s)
	}
	slices.Sort(spaces)
	for _, s := range spaces {
		fmt.Fprintf(w, "  %s: %s\n", s, l.Chosen[s])
	}
}
