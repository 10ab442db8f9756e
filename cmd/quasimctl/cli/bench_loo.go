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
	By         string   `json:"by"` // "space", "kernel" or "family"
	evolve.LOO
}

// kernelGroup is a space's kernel for leave-one-kernel-out: its name up to
// the first "_" or "/" (convolution_milo_A100 and convolution_RTX_3090 are
// convolution; the hub's gemm/A100 is gemm). Names, not recorded kernel
// names, since a T4 file records none and would stay in training beside
// its siblings.
func kernelGroup(space string) string {
	if i := strings.IndexAny(space, "_/"); i > 0 {
		return space[:i]
	}
	return space
}

// familyGroup is a space's device family for leave-one-family-out: the
// vendor, and for NVIDIA the architecture, read from the GPU's name in the
// space's name (convolution_RTX_2080_Ti is nvidia-turing, gemm/MI250X is
// amd), so that a choice is scored on devices unlike those it was made on.
// A name it does not know is "other".
func familyGroup(space string) string {
	for _, tok := range strings.FieldsFunc(strings.ToLower(space), func(r rune) bool { return r == '_' || r == '/' || r == '-' || r == '.' }) {
		for _, f := range deviceFamilies {
			for _, p := range f.prefixes {
				if strings.HasPrefix(tok, p) {
					return f.name
				}
			}
		}
	}
	return "other"
}

// deviceFamilies maps a token of a GPU's name to its family, first match
// wins. "t4" is left out: a FAIR T4 results file ends in _T4.
var deviceFamilies = []struct {
	name     string
	prefixes []string
}{
	{"amd", []string{"mi50", "mi100", "mi210", "mi250", "mi300", "w6600", "w6800", "w7800", "w7900", "rx", "radeon", "amd", "gfx"}},
	{"intel", []string{"arc", "a770", "max1100", "max1550", "pvc", "intel", "uhd", "iris"}},
	{"nvidia-turing", []string{"2060", "2070", "2080", "titanrtx", "quadrortx"}},
	{"nvidia-ampere", []string{"a100", "a10", "a30", "a40", "a4000", "a5000", "a6000", "3060", "3070", "3080", "3090"}},
	{"nvidia-ada", []string{"4060", "4070", "4080", "4090", "l40", "ada"}},
	{"nvidia-hopper", []string{"h100", "h200", "gh200"}},
	{"nvidia-volta", []string{"v100", "titanv"}},
	{"nvidia-pascal", []string{"p100", "1060", "1070", "1080"}},
}

// leaveOneOut selects among the variants of strategy in the report (the
// strategy itself and every "strategy:options") by leave-one-space-out, or
// with by "kernel" leave-one-kernel-out, with "family" leave one device
// family out.
func leaveOneOut(rep benchReport, order []string, strategy, by string) (*looReport, error) {
	var cands []string
	for _, st := range order {
		if st == strategy || strings.HasPrefix(st, strategy+":") {
			cands = append(cands, st)
		}
	}
	if len(cands) < 2 {
		return nil, usagef("--loo %s: the traces hold %d variant(s) of it (%s); leave-one-out needs two or more", strategy, len(cands), strings.Join(cands, ", "))
	}
	var group func(string) string
	switch by {
	case "space":
	case "kernel":
		group = kernelGroup
	case "family":
		group = familyGroup
	default:
		return nil, usagef("--loo-by %q: want space, kernel or family", by)
	}
	return &looReport{Strategy: strategy, Candidates: cands, By: by, LOO: evolve.LeaveOneOut(rep.Scores, cands, rep.Ks, group)}, nil
}

func printLOO(w io.Writer, rep benchReport) {
	l := rep.LOO
	if l == nil {
		return
	}
	on := "the other spaces"
	switch l.By {
	case "kernel":
		on = "the spaces of the other kernels"
	case "family":
		on = "the spaces of the other device families"
	}
	fmt.Fprintf(w, "\nleave one %s out among %d variants of %s (chosen by the mean of k=%s on %s):\n",
		l.By, len(l.Candidates), l.Strategy, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(rep.Ks)), ","), "[]"), on)
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
	row("held out (each space scored by the variant chosen without its "+l.By+")", l.Mean)
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
