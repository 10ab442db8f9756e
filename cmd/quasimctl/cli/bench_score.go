package cli

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evolve"
)

var emptyProblem evaluate.Problem

type benchScoreOptions struct {
	spaces []string
	trace  string
	json   bool
	peers  []string
	loo    string
	looBy  string
	versus string
}

func newBenchScoreCommand() *cobra.Command {
	var o benchScoreOptions
	cmd := &cobra.Command{
		Use:   "score --space FILE_OR_DIR --trace DIR",
		Short: "Recompute bench scores from trace files and the recorded spaces alone",
		Long: `score reads the traces that bench --trace wrote and recomputes every score
from the config keys in them and the times in the recorded space files: the
status and time written in a trace are checked against the recording, not
trusted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.trace == "" {
				return usagef("--trace DIR is required")
			}
			var peers *peerFile
			if len(o.peers) > 0 {
				var err error
				if peers, err = loadPeers(o.peers); err != nil {
					return err
				}
			}
			spaces, err := loadSpaces(o.spaces)
			if err != nil {
				return err
			}
			rep, order, err := rescore(spaces, o.trace, o.versus)
			if err != nil {
				return err
			}
			if peers != nil {
				rep.Peers = comparePeers(peers, rep)
			}
			if o.loo != "" {
				if rep.LOO, err = leaveOneOut(rep, order, o.loo, o.looBy); err != nil {
					return err
				}
			}
			if o.json {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", " ")
				return enc.Encode(rep)
			}
			printReport(cmd.OutOrStdout(), rep, order)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&o.spaces, "space", nil, "recorded space file or directory (repeatable)")
	fs.StringSliceVar(&o.peers, "peers", nil, "peer score files to compare with (the kernel_tuner.json format; several, comma-separated or repeated, are compared as one set of peers)")
	fs.StringVar(&o.trace, "trace", "", "directory bench --trace wrote")
	fs.StringVar(&o.loo, "loo", "", "choose among the traced variants of this strategy (NAME and NAME:options) by leave-one-out, and report the held-out scores beside the in-sample ones")
	fs.StringVar(&o.looBy, "loo-by", "space", "what --loo holds out: space (one space at a time), kernel (every space of one kernel, by the name up to its first _ or /, so no sibling on another GPU stays in training) or family (every space of one device family: the vendor, for NVIDIA the architecture, read from the GPU's name)")
	fs.StringVar(&o.versus, "versus", "", versusUsage)
	fs.BoolVar(&o.json, "json", false, "print JSON instead of a table")
	return cmd
}

// rescore rebuilds a bench report from trace files.
func rescore(spaces []benchSpace, dir, versus string) (benchReport, []string, error) {
	var order []string
	runs := map[string][]evolve.BenchRun{}
	budget, seeds := 0, 0
	for _, s := range spaces {
		ents, err := os.ReadDir(filepath.Join(dir, s.Name))
		if err != nil {
			return benchReport{}, nil, fmt.Errorf("traces of %s: %w", s.Name, err)
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			st := e.Name()
			if !slices.Contains(order, st) {
				order = append(order, st)
			}
			files, _ := filepath.Glob(filepath.Join(dir, s.Name, st, "seed-*.jsonl"))
			for _, f := range files {
				seed, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "seed-"), ".jsonl"), 10, 64)
				if err != nil {
					return benchReport{}, nil, fmt.Errorf("trace %s: bad file name", f)
				}
				tr, err := readTrace(f, s)
				if err != nil {
					return benchReport{}, nil, err
				}
				budget = max(budget, len(tr))
				runs[s.Name+"\x00"+st] = append(runs[s.Name+"\x00"+st], evolve.BenchRun{Space: s.Name, Strategy: st, Seed: seed, Trace: tr})
			}
			seeds = max(seeds, len(files))
		}
	}
	if len(order) == 0 {
		return benchReport{}, nil, fmt.Errorf("no traces under %s", dir)
	}
	slices.Sort(order)
	for _, rs := range runs {
		// Sums in seed order, as bench does, give bit-equal scores.
		slices.SortFunc(rs, func(a, b evolve.BenchRun) int { return cmp.Compare(a.Seed, b.Seed) })
	}
	if err := checkVersus(versus, order); err != nil {
		return benchReport{}, nil, err
	}
	o := benchOptions{strategies: order, budget: budget, seeds: seeds, batch: 0, versus: versus}
	rep := report(o, spaces, func(space, strategy string) []evolve.BenchRun { return runs[space+"\x00"+strategy] })
	return rep, order, nil
}

func readTrace(path string, s benchSpace) ([]evolve.Measurement, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []evolve.Measurement
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		m, err := parseTraceLine(sc.Bytes(), s)
		if err != nil {
			return nil, fmt.Errorf("trace %s:%d: %w", path, line, err)
		}
		if seen[m.Key] {
			return nil, fmt.Errorf("trace %s:%d: key %q evaluated twice", path, line, m.Key)
		}
		seen[m.Key] = true
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("trace %s: %w", path, err)
	}
	return out, nil
}

// parseTraceLine reads one trace line and checks it against the recording,
// whose status, time and cost it returns.
func parseTraceLine(b []byte, s benchSpace) (evolve.Measurement, error) {
	var l traceLine
	if err := json.Unmarshal(b, &l); err != nil {
		return evolve.Measurement{}, err
	}
	t, ok := s.rec.Trial(l.Key)
	if !ok {
		return evolve.Measurement{}, fmt.Errorf("key %q is not in space %s", l.Key, s.Name)
	}
	if string(t.Status) != l.Status || (t.OK() && (l.TimeMS == nil || *l.TimeMS != t.Time)) {
		return evolve.Measurement{}, fmt.Errorf("key %q recorded as %s %v, trace says %s", l.Key, t.Status, t.Time, l.Status)
	}
	m := evolve.Measurement{Key: l.Key, Status: string(t.Status), Time: t.Time, OK: t.OK(), Cost: t.Cost, By: l.By}
	if l.ShownMS != nil {
		if !t.OK() || !slices.Contains(t.Times, *l.ShownMS) {
			return evolve.Measurement{}, fmt.Errorf("key %q: shown %v, not one of its recorded repetitions", l.Key, *l.ShownMS)
		}
		m.True, m.Time = t.Time, *l.ShownMS
	}
	return m, nil
}
