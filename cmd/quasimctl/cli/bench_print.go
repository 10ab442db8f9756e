package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/quasim/quasim/evolve"
)

// This file prints bench's report as tables.

func printReport(w io.Writer, rep benchReport, order []string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "space\tstrategy\t" + kHead(rep.Ks)
	fmt.Fprintln(tw, head+"to95\tsim_s_to95\tus/eval\t")
	row := func(sc evolve.Score) {
		line := sc.Space + "\t" + sc.Strategy + "\t"
		for _, k := range rep.Ks {
			line += fmt.Sprintf("%.3f\t", sc.At[k])
		}
		line += fmtOpt(sc.EvalsTo95, "%.1f") + "\t" + fmtOpt(sc.SimSecondsTo95, "%.0f") + "\t" + fmt.Sprintf("%.1f", sc.OverheadUS) + "\t"
		fmt.Fprintln(tw, line)
	}
	expRow := func(name string, exp map[int]float64) {
		line := name + "\trandom (exact)\t"
		for _, k := range rep.Ks {
			line += fmt.Sprintf("%.3f\t", exp[k])
		}
		fmt.Fprintln(tw, line+"\t\t\t")
	}
	for _, s := range rep.Spaces {
		for _, sc := range rep.Scores {
			if sc.Space == s.Name {
				row(sc)
			}
		}
		if slices.Contains(order, "random") {
			expRow(s.Name, rep.RandomExp[s.Name])
		}
	}
	fmt.Fprintln(tw)
	mean := fmt.Sprintf("mean (%d spaces)", len(rep.Spaces))
	for _, sc := range rep.Mean {
		sc.Space = mean
		row(sc)
	}
	if slices.Contains(order, "random") {
		expRow(mean, rep.RandomMean)
	}
	for _, sc := range rep.Mean {
		line := "seed spread (sd of the mean)\t" + sc.Strategy + "\t"
		for _, k := range rep.Ks {
			line += fmt.Sprintf("%.3f\t", rep.Spread[sc.Strategy][k])
		}
		fmt.Fprintln(tw, line+"\t\t\t")
	}
	if p := rep.Peers; p != nil {
		fmt.Fprintln(tw)
		name := fmt.Sprintf("mean (%d peer spaces)", len(p.Spaces))
		for _, sc := range p.Mean {
			sc.Space = name
			row(sc)
		}
		line := name + "\tpeer best\t"
		for _, k := range rep.Ks {
			b := p.Best[k]
			line += fmt.Sprintf("%.3f\t", b.Value)
		}
		fmt.Fprintln(tw, line+"\t\t\t")
	}
	tw.Flush()
	printVersus(w, rep, order)
	printLOO(w, rep)
	printAllocation(w, rep)
	printOverhead(w, rep)
	if p := rep.Peers; p != nil && len(p.Best) > 0 {
		var parts []string
		for _, k := range rep.Ks {
			b := p.Best[k]
			parts = append(parts, fmt.Sprintf("k=%d %s (%s) %.3f", k, b.Strategy, b.File, b.Value))
		}
		fmt.Fprintf(w, "\nbest peer at each k, mean over %s: %s\n", strings.Join(p.Spaces, ", "), strings.Join(parts, ", "))
		if p.Source != "" {
			fmt.Fprintf(w, "peer source: %s\n", p.Source)
		}
		printPeerSpaces(w, rep, order)
	}
}

func fmtOpt(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

// printAllocation shows, for strategies that hand evaluations to members,
// each member's share of the evaluations in each window of k, averaged
// over the spaces.
func printAllocation(w io.Writer, rep benchReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	printed := false
	for _, sc := range rep.Mean {
		if sc.Allocation == nil {
			continue
		}
		if !printed {
			fmt.Fprintf(tw, "\nallocation: share of each window's evaluations, mean over %d spaces\n", len(rep.Spaces))
			head := "strategy\tmember\t"
			lo := 0
			for _, k := range rep.Ks {
				head += fmt.Sprintf("%d-%d\t", lo+1, k)
				lo = k
			}
			fmt.Fprintln(tw, head)
			printed = true
		}
		names := map[string]bool{}
		for _, sh := range sc.Allocation {
			for n := range sh {
				names[n] = true
			}
		}
		for _, n := range slices.Sorted(maps.Keys(names)) {
			line := sc.Strategy + "\t" + n + "\t"
			for _, k := range rep.Ks {
				line += fmt.Sprintf("%.2f\t", sc.Allocation[k][n])
			}
			fmt.Fprintln(tw, line)
		}
		fmt.Fprintf(tw, "%s\tfollows a new best\t%.2f\t\n", sc.Strategy, sc.Follow)
	}
	if printed {
		fmt.Fprintf(tw, "(follows a new best: share of the %d evaluations after a member's new best given to that member)\n", evolve.FollowWindow)
	}
	tw.Flush()
}

// printOverhead sets each strategy's own time per evaluation beside the
// time the recording tuner spent on itself per config, per space.
func printOverhead(w io.Writer, rep benchReport) {
	measured := false
	for _, sc := range rep.Scores {
		measured = measured || sc.OverheadUS > 0
	}
	if !measured {
		return // rescored from traces: no timings
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\noverhead per evaluation, ms: each strategy's Ask+Tell beside the recording tuner's framework time per config")
	head := "space\tconfigs\trecorded framework\t"
	var names []string
	for _, sc := range rep.Mean {
		names = append(names, sc.Strategy)
		head += sc.Strategy + "\t"
	}
	fmt.Fprintln(tw, head)
	for _, s := range rep.Spaces {
		line := fmt.Sprintf("%s\t%d\t%s\t", s.Name, s.Configs, fmtOpt(nonZero(s.FrameworkMS), "%.2f"))
		for _, n := range names {
			for _, sc := range rep.Scores {
				if sc.Space == s.Name && sc.Strategy == n {
					line += fmt.Sprintf("%.3f\t", sc.OverheadUS/1000)
				}
			}
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

func nonZero(v float64) *float64 {
	if v == 0 {
		return nil
	}
	return &v
}

// printPeerSpaces compares with the peers space by space: on how many
// spaces each strategy beats the peer strategy best on the mean, and the
// median evaluations to 95% beside the peers' best.
func printPeerSpaces(w io.Writer, rep benchReport, order []string) {
	p := rep.Peers
	fmt.Fprintf(w, "\nspaces (of %d) on which each strategy beats the peer best at k on that space:\n", len(p.Spaces))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "strategy\t" + kHead(rep.Ks)
	fmt.Fprintln(tw, head)
	for _, st := range order {
		line := st + "\t"
		for _, k := range rep.Ks {
			line += strconv.Itoa(p.Wins[st][k]) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nmedian evaluations to 95% of the optimum:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "space\t"+strings.Join(order, "\t")+"\tpeer best\t")
	for _, sp := range p.Spaces {
		line := sp + "\t"
		for _, st := range order {
			for _, sc := range rep.Scores {
				if sc.Space == sp && sc.Strategy == st {
					line += fmtOpt(sc.EvalsTo95, "%.1f") + "\t"
				}
			}
		}
		b := p.To95[sp]
		if b.Value != nil {
			line += fmt.Sprintf("%.1f (%s)\t", *b.Value, b.Strategy)
		} else {
			line += "-\t"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}
