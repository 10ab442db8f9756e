package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/strategies"
)

type benchOptions struct {
	spaces      []string
	strategies  []string
	budget      int
	seeds       int
	batch       int
	jobs        int
	json        bool
	trace       string
	peers       []string
	roundTripAt int
	quiet       bool
	warmFrom    []string
	report      string // HTML page of the scores
	versus      string // strategy the others are paired with, seed by seed
}

func newBenchCommand() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench --space FILE_OR_DIR [--space ...] [flags]",
		Short: "Replay search strategies on recorded spaces and score them (no daemon needed)",
		Long: `bench runs each strategy on each recorded space (Kernel Tuner cache files,
.json or .json.gz, and FAIR T4 results files; a directory means every such file
directly in it) with the replay evaluator, and reports per space, per strategy
and as the mean over spaces:

  k=N     mean fraction of the optimum after N unique evaluations
          (optimum / best valid time so far; failed configs count);
          only the k a run can reach (up to --budget and the largest space)
  to95    median evaluations to reach 0.95 of the optimum ("-": half the
          seeds never did within the budget)
  sim_s   median simulated tuning seconds to reach 0.95 (compile +
          benchmark + framework time recorded for each config)
  us/eval the strategy's own time in Ask and Tell per evaluation

and under the means each strategy's seed spread: the standard deviation over
seeds of one seed's mean over the spaces.

A strategy may carry options, ":key=value" each: portfolio:alloc=uniform
(or roundrobin: the baselines of the bandit), portfolio:reward=rank,
explore, discount, init, candidates, members=es+forest, forest.KEY=V
for the forest member; forest:trees=32, minleaf, features, random, starts.
"bench score --loo portfolio" chooses among the traced variants by
leave-one-space-out. --versus BASE pairs each strategy with BASE seed by
seed: the mean difference of a seed's mean over the spaces, its spread over
seeds, its standard error and the seeds won, which says whether a
difference is more than the seeds' luck.

With --warm-from, each strategy also runs as "<name>+warm": before its first
measurement it ranks the space's configs by the recordings of the same kernel
on other devices (leave one GPU out; rank transfer, never raw times) and
measures the best-ranked first. Only strategies that take a warm start
(portfolio) can.

A recording whose objective is another measured quantity (Kernel Tuner's
"objective", a T4 file's "objectives") is replayed on that objective, to
minimise, or to maximise when the file says objective_higher_is_better or the
name is a rate ending in /s (GFLOP/s). Its fraction of the optimum is
best/optimum for a positive objective to maximise, and, when any valid value
is zero or negative (a score), 1 - 0.99*(best-optimum)/(worst-optimum) over
the valid values: 1 at the optimum, 0.01 at the worst valid config. --json
gives each space's rule.

Files of the same base name in different folders (the benchmark hub's
kernel/GPU.json.gz layout) are named folder/name.

For random, the exact expectation of random sampling without replacement is
printed beside it: the two must agree, which checks the harness.`,
		Example: `  quasimctl bench --space ../shared/spaces --strategy random,es --budget 400 --seeds 20
  quasimctl bench --space ../shared/spaces --trace /tmp/traces --json > scores.json
  quasimctl bench --space ../shared/spaces --warm-from ../shared/spaces --strategy portfolio
  quasimctl bench score --space ../shared/spaces --trace /tmp/traces`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBench(cmd.Context(), cmd, o) },
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&o.spaces, "space", nil, "recorded space file or directory (repeatable)")
	fs.StringSliceVar(&o.strategies, "strategy", []string{"random", "es"}, "strategies to run, comma separated ("+strings.Join(strategies.Names(), ", ")+"), each NAME or NAME:key=value[:key=value...]")
	fs.IntVar(&o.budget, "budget", 400, "unique evaluations per run")
	fs.IntVar(&o.seeds, "seeds", 20, "runs per space and strategy, seeded 1..N")
	fs.IntVar(&o.batch, "batch", 1, "configs per Ask")
	fs.IntVar(&o.jobs, "jobs", runtime.GOMAXPROCS(0), "runs in parallel")
	fs.BoolVar(&o.json, "json", false, "print JSON instead of a table")
	fs.StringVar(&o.trace, "trace", "", "write every run's evaluations to DIR/<space>/<strategy>/seed-<n>.jsonl")
	fs.StringSliceVar(&o.peers, "peers", nil, "peer score files to compare with (the kernel_tuner.json format; several, comma-separated or repeated, are compared as one set of peers)")
	fs.IntVar(&o.roundTripAt, "roundtrip-at", 0, "marshal each strategy after N evaluations and resume from the bytes")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	fs.StringVar(&o.report, "report", "", "also write the scores as an HTML page of charts (fraction of the optimum against k, per space, with the peers' points) to FILE")
	fs.StringVar(&o.versus, "versus", "", versusUsage)
	fs.StringArrayVar(&o.warmFrom, "warm-from", nil, "also run each strategy warm-started by rank transfer from these recorded spaces, file or directory (repeatable): per space, those of the same kernel on other devices")
	cmd.AddCommand(newBenchScoreCommand(), newBenchLiveCommand())
	return cmd
}

// benchSpace is a loaded recording ready for replay.
type benchSpace struct {
	evolve.BenchSpace
	rec *replay.Recording
}

// loadSpaces reads every recording named by paths, files or directories.
func loadSpaces(paths []string) ([]benchSpace, error) { return loadSpacesFlag("--space", paths) }

// loadSpacesFlag is loadSpaces naming flag in its errors.
func loadSpacesFlag(flag string, paths []string) ([]benchSpace, error) {
	if len(paths) == 0 {
		return nil, usagef("no %s given", flag)
	}
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, usagef("%s %s: %w", flag, p, err)
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, p, err)
		}
		n := 0
		for _, e := range ents {
			if !e.IsDir() && (strings.HasSuffix(e.Name(), ".json") || strings.HasSuffix(e.Name(), ".json.gz")) {
				files = append(files, filepath.Join(p, e.Name()))
				n++
			}
		}
		if n == 0 {
			return nil, usagef("%s %s: no .json or .json.gz files in it", flag, p)
		}
	}
	out := make([]benchSpace, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, f := range files {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			rec, err := replay.Load(f)
			if err != nil {
				errs[i] = err
				return
			}
			out[i] = newBenchSpace(rec)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	// Files of one base name in different folders (the benchmark hub's
	// kernel/GPU.json.gz layout) are named by their folder too: kernel/GPU.
	count := map[string]int{}
	for _, s := range out {
		count[s.Name]++
	}
	for i := range out {
		if count[out[i].Name] > 1 {
			out[i].Name = filepath.Base(filepath.Dir(files[i])) + "/" + out[i].Name
		}
	}
	seen := map[string]string{}
	for i := range out {
		if prev, dup := seen[out[i].Name]; dup {
			return nil, usagef("spaces %s and %s have the same name %q", prev, files[i], out[i].Name)
		}
		seen[out[i].Name] = files[i]
	}
	return out, nil
}

func newBenchSpace(rec *replay.Recording) benchSpace {
	sp, _ := rec.Space(emptyProblem)
	opt, _ := rec.Optimum()
	var valid []float64
	for _, c := range sp.All() {
		if t, ok := rec.Trial(sp.Key(c)); ok && t.OK() {
			valid = append(valid, t.Time)
		}
	}
	bs := evolve.BenchSpace{
		Name:    rec.Name,
		Space:   sp,
		Optimum: opt,
		Size:    rec.Len(),
		Valid:   valid,
		Measure: func(c genome.Config) (evolve.Measurement, error) {
			t, err := rec.Evaluate(context.Background(), c, emptyProblem)
			if err != nil {
				return evolve.Measurement{}, err
			}
			return evolve.Measurement{Key: t.Key, Status: string(t.Status), Time: t.Time, OK: t.OK(), Cost: t.Cost}, nil
		},
	}
	return benchSpace{BenchSpace: bs, rec: rec}
}

// benchReport is the JSON output of bench.
type benchReport struct {
	Budget     int                        `json:"budget"`
	Seeds      int                        `json:"seeds"`
	Batch      int                        `json:"batch"`
	Ks         []int                      `json:"ks"`
	Spaces     []spaceInfo                `json:"spaces"`
	Scores     []evolve.Score             `json:"scores"`
	Mean       []evolve.Score             `json:"mean"`
	RandomExp  map[string]map[int]float64 `json:"random_expectation"`
	RandomMean map[int]float64            `json:"random_expectation_mean"`
	Peers      *peerComparison            `json:"peers,omitempty"`
	// Spread is, per strategy and k, the standard deviation over seeds
	// of the seed's mean over the spaces.
	Spread map[string]map[int]float64 `json:"seed_spread"`
	// LOO is leave-one-space-out selection among the variants of a
	// strategy (bench score --loo).
	LOO *looReport `json:"loo,omitempty"`
	// Versus pairs each strategy with one of them seed by seed (--versus).
	Versus *versusReport `json:"versus,omitempty"`
}

type spaceInfo struct {
	Name    string  `json:"name"`
	Configs int     `json:"configs"`
	Valid   int     `json:"valid"`
	Optimum float64 `json:"optimum_ms"`
	Device  string  `json:"device"`
	// Objective is what the recording measured as its objective when
	// not time (then optimum_ms is the minimised value, see Rule, and
	// OptimumValue the best objective value), and Rule how a run's
	// fraction of the optimum is computed.
	Objective    string  `json:"objective,omitempty"`
	Maximize     bool    `json:"maximize,omitempty"`
	OptimumValue float64 `json:"optimum_value,omitempty"`
	Rule         string  `json:"fraction_rule"`
	// FrameworkMS is the recording tuner's own time per config (Kernel
	// Tuner's framework_time), to set beside a strategy's overhead.
	FrameworkMS float64 `json:"framework_ms_per_config,omitempty"`
}

func runBench(ctx context.Context, cmd *cobra.Command, o benchOptions) error {
	if o.budget <= 0 || o.seeds <= 0 || o.batch <= 0 || o.jobs <= 0 {
		return usagef("--budget, --seeds, --batch and --jobs must be positive")
	}
	for _, s := range o.strategies {
		f, err := strategies.Parse(s)
		if err != nil {
			return usagef("%v", err)
		}
		if _, warm := f(oneParamSpace, 1).(evolve.WarmStarter); len(o.warmFrom) > 0 && !warm {
			return usagef("--warm-from: strategy %q takes no warm start (portfolio does)", s)
		}
	}
	named := slices.Clone(o.strategies)
	if len(o.warmFrom) > 0 {
		for _, st := range o.strategies {
			named = append(named, st+warmSuffix)
		}
	}
	if err := checkVersus(o.versus, named); err != nil {
		return err
	}
	var peers *peerFile
	if len(o.peers) > 0 {
		var err error
		if peers, err = loadPeers(o.peers); err != nil {
			return err
		}
	}
	stderr := cmd.ErrOrStderr()
	if o.quiet {
		stderr = io.Discard
	}
	start := time.Now()
	spaces, err := loadSpaces(o.spaces)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bench: loaded %d spaces in %s\n", len(spaces), time.Since(start).Round(time.Millisecond))
	var priors [][]genome.Config
	names := o.strategies
	if len(o.warmFrom) > 0 {
		if priors, err = warmPriors(o.warmFrom, spaces, stderr); err != nil {
			return err
		}
		for _, st := range o.strategies {
			names = append(names, st+warmSuffix)
		}
		o.strategies = names
	}

	type job struct {
		space    int
		strategy string
		seed     uint64
	}
	var jobs []job
	for i := range spaces {
		for _, st := range names {
			for seed := 1; seed <= o.seeds; seed++ {
				jobs = append(jobs, job{i, st, uint64(seed)})
			}
		}
	}
	runs := make([]evolve.BenchRun, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done, lastReport := 0, time.Now()
	for range o.jobs {
		wg.Go(func() {
			for i := range next {
				j := jobs[i]
				bs := spaces[j.space].BenchSpace
				base, warm := strings.CutSuffix(j.strategy, warmSuffix)
				f, _ := strategies.Get(base)
				if warm {
					f = warmFactory(f, priors[j.space])
				}
				runs[i], errs[i] = evolve.Run(ctx, bs, f, j.seed, evolve.RunOptions{
					Budget: o.budget, Batch: o.batch, RoundTripAt: o.roundTripAt, Clock: time.Now,
				})
				runs[i].Strategy = j.strategy
				mu.Lock()
				done++
				if time.Since(lastReport) > 2*time.Second || done == len(jobs) {
					lastReport = time.Now()
					fmt.Fprintf(stderr, "bench: %d/%d runs (%s %s seed %d) %s\n", done, len(jobs), bs.Name, j.strategy, j.seed, time.Since(start).Round(time.Second))
				}
				mu.Unlock()
			}
		})
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, err := range errs {
		if err != nil {
			j := jobs[i]
			return fmt.Errorf("run %s on %s seed %d: %w", j.strategy, spaces[j.space].Name, j.seed, err)
		}
	}
	if o.trace != "" {
		if err := writeTraces(o.trace, runs); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "bench: wrote %d traces under %s\n", len(runs), o.trace)
	}
	byCell := map[string][]evolve.BenchRun{}
	for i, r := range runs {
		k := spaces[jobs[i].space].Name + "\x00" + jobs[i].strategy
		byCell[k] = append(byCell[k], r)
	}
	rep := report(o, spaces, func(space, strategy string) []evolve.BenchRun { return byCell[space+"\x00"+strategy] })
	if peers != nil {
		rep.Peers = comparePeers(peers, rep)
	}
	if o.report != "" {
		if err := writeBenchHTML(o.report, rep, peers); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "bench: wrote %s\n", o.report)
	}
	if o.json {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", " ")
		return enc.Encode(rep)
	}
	printReport(cmd.OutOrStdout(), rep, o.strategies)
	return nil
}

// benchKs are the metric's evaluation counts that a run can reach: none
// past the budget or the largest space, where every fraction would only
// repeat the last one; the budget itself when no count is that small.
func benchKs(budget int, spaces []benchSpace) []int {
	most := 0
	for _, s := range spaces {
		most = max(most, s.Size)
	}
	budget = min(budget, most)
	var ks []int
	for _, k := range evolve.Ks {
		if k <= budget {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 && budget > 0 {
		ks = []int{budget}
	}
	return ks
}

func report(o benchOptions, spaces []benchSpace, runsOf func(space, strategy string) []evolve.BenchRun) benchReport {
	ks := benchKs(o.budget, spaces)
	rep := benchReport{
		Budget: o.budget, Seeds: o.seeds, Batch: o.batch, Ks: ks,
		RandomExp: map[string]map[int]float64{}, RandomMean: map[int]float64{},
		Spread: map[string]map[int]float64{},
	}
	optimum := map[string]float64{}
	for _, s := range spaces {
		info := spaceInfo{Name: s.Name, Configs: s.Size, Valid: len(s.Valid), Optimum: s.Optimum, Device: s.rec.Device(), FrameworkMS: s.rec.FrameworkMS()}
		var obj string
		obj, info.Maximize, info.Rule = s.rec.Objective()
		if obj != "time" || info.Rule != replay.RuleRatio {
			_, best := s.rec.Optimum()
			t, _ := s.rec.Trial(best)
			info.Objective = obj
			info.OptimumValue, _ = s.rec.Value(t)
		}
		rep.Spaces = append(rep.Spaces, info)
		exp := map[int]float64{}
		for _, k := range ks {
			exp[k] = evolve.RandomExpectation(s.Valid, s.Size, k)
			rep.RandomMean[k] += exp[k] / float64(len(spaces))
		}
		rep.RandomExp[s.Name] = exp
		optimum[s.Name] = s.Optimum
	}
	runsAll := map[string][]evolve.BenchRun{}
	for _, st := range o.strategies {
		var per []evolve.Score
		var all []evolve.BenchRun
		for _, s := range spaces {
			runs := runsOf(s.Name, st)
			sc := evolve.ScoreRuns(s.Name, st, runs, s.Optimum, ks)
			per = append(per, sc)
			rep.Scores = append(rep.Scores, sc)
			all = append(all, runs...)
		}
		rep.Mean = append(rep.Mean, evolve.Mean(st, per, ks))
		rep.Spread[st] = evolve.SeedSpread(all, func(s string) float64 { return optimum[s] }, ks)
		runsAll[st] = all
	}
	if o.versus != "" {
		rep.Versus = &versusReport{Base: o.versus, Paired: map[string]evolve.Paired{}}
		for _, st := range o.strategies {
			if st != o.versus {
				rep.Versus.Paired[st] = evolve.PairedDiff(runsAll[st], runsAll[o.versus], func(s string) float64 { return optimum[s] }, ks)
			}
		}
	}
	return rep
}

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

// traceLine is one evaluation in a trace file.
type traceLine struct {
	Key    string   `json:"key"`
	Status string   `json:"status"`
	TimeMS *float64 `json:"time_ms"`
	By     string   `json:"by,omitempty"` // portfolio member that proposed it
}

func tracePath(dir, space, strategy string, seed uint64) string {
	return filepath.Join(dir, space, strategy, fmt.Sprintf("seed-%d.jsonl", seed))
}

func writeTraces(dir string, runs []evolve.BenchRun) error {
	for _, r := range runs {
		p := tracePath(dir, r.Space, r.Strategy, r.Seed)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
		f, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
		w := bufio.NewWriter(f)
		enc := json.NewEncoder(w)
		for _, m := range r.Trace {
			l := traceLine{Key: m.Key, Status: m.Status, By: m.By}
			if m.OK {
				t := m.Time
				l.TimeMS = &t
			}
			if err := enc.Encode(l); err != nil {
				f.Close()
				return fmt.Errorf("write trace %s: %w", p, err)
			}
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return fmt.Errorf("write trace %s: %w", p, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write trace %s: %w", p, err)
		}
	}
	return nil
}

// peerFile is the kernel_tuner.json format: per space, per strategy, the
// mean fraction at each k and the median evaluations to 95%. Several files
// load as one: their strategies side by side.
type peerFile struct {
	Source string `json:"source"`
	raw    map[string]map[string]map[string]any
	// covered lists, per file, the spaces it has: the comparison keeps the
	// spaces every file has, so every peer strategy is scored on the same.
	covered []map[string]bool
	from    map[string]string // strategy -> its file's base name, without .json
}

func loadPeers(paths []string) (*peerFile, error) {
	pf := &peerFile{raw: map[string]map[string]map[string]any{}}
	from := map[string]string{} // strategy -> file that has it
	var sources []string
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, usagef("--peers: %w", err)
		}
		var f struct {
			Source string                               `json:"source"`
			Spaces map[string]map[string]map[string]any `json:"spaces"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("--peers %s: %w", path, err)
		}
		if len(f.Spaces) == 0 {
			return nil, fmt.Errorf("--peers %s: no \"spaces\"", path)
		}
		cov := map[string]bool{}
		for sp, strats := range f.Spaces {
			cov[sp] = true
			if pf.raw[sp] == nil {
				pf.raw[sp] = map[string]map[string]any{}
			}
			for n, cell := range strats {
				if prev, ok := from[n]; ok && prev != path {
					return nil, fmt.Errorf("--peers: strategy %q is in both %s and %s", n, prev, path)
				}
				from[n] = path
				pf.raw[sp][n] = cell
			}
		}
		pf.covered = append(pf.covered, cov)
		if f.Source != "" {
			sources = append(sources, f.Source)
		}
	}
	pf.Source = strings.Join(sources, "; ")
	pf.from = map[string]string{}
	for n, path := range from {
		pf.from[n] = strings.TrimSuffix(filepath.Base(path), ".json")
	}
	return pf, nil
}

// covers reports whether every peer file has space sp.
func (p *peerFile) covers(sp string) bool {
	for _, c := range p.covered {
		if !c[sp] {
			return false
		}
	}
	return len(p.covered) > 0
}

type peerBest struct {
	Strategy string  `json:"strategy"`
	File     string  `json:"file"` // the peer file it is from, without .json
	Value    float64 `json:"value"`
}

// peerComparison sets quasim's strategies beside the peers' on the spaces
// both were run on.
type peerComparison struct {
	Source string                     `json:"source"`
	Spaces []string                   `json:"spaces"`
	Mean   []evolve.Score             `json:"mean"`      // ours, over the common spaces
	Peer   map[string]map[int]float64 `json:"peer_mean"` // theirs, over the common spaces
	Best   map[int]peerBest           `json:"peer_best"`
	// Wins counts, per strategy of ours and k, the common spaces on which
	// it beats, on that space, the peer strategy best on the mean at k.
	Wins map[string]map[int]int `json:"wins"`
	// To95 is, per common space, the peers' lowest median evaluations to
	// 95% and whose it is; nil Value when none of them got there.
	To95 map[string]peerTo95 `json:"peer_best_to95"`
}

type peerTo95 struct {
	Strategy string   `json:"strategy,omitempty"`
	Value    *float64 `json:"value"`
}

func comparePeers(p *peerFile, rep benchReport) *peerComparison {
	pc := &peerComparison{Source: p.Source, Peer: map[string]map[int]float64{}, Best: map[int]peerBest{}}
	for _, s := range rep.Spaces {
		if p.covers(s.Name) {
			pc.Spaces = append(pc.Spaces, s.Name)
		}
	}
	if len(pc.Spaces) == 0 {
		return pc
	}
	for _, st := range rep.Mean {
		var per []evolve.Score
		for _, sc := range rep.Scores {
			if sc.Strategy == st.Strategy && slices.Contains(pc.Spaces, sc.Space) {
				per = append(per, sc)
			}
		}
		pc.Mean = append(pc.Mean, evolve.Mean(st.Strategy, per, rep.Ks))
	}
	var names []string
	for n := range p.raw[pc.Spaces[0]] {
		names = append(names, n)
	}
	sort.Strings(names) // every file's strategies, side by side
	for _, n := range names {
		m := map[int]float64{}
		complete := true
		for _, sp := range pc.Spaces {
			cell, ok := p.raw[sp][n]
			if !ok {
				complete = false
				break
			}
			for _, k := range rep.Ks {
				v, _ := cell[strconv.Itoa(k)].(float64)
				m[k] += v / float64(len(pc.Spaces))
			}
		}
		if !complete {
			continue
		}
		pc.Peer[n] = m
		for _, k := range rep.Ks {
			if b, ok := pc.Best[k]; !ok || m[k] > b.Value+1e-12 {
				pc.Best[k] = peerBest{Strategy: n, File: p.from[n], Value: m[k]}
			}
		}
	}
	for k, b := range pc.Best {
		b.Value = math.Round(b.Value*1e4) / 1e4
		pc.Best[k] = b
	}
	pc.Wins = map[string]map[int]int{}
	for _, st := range rep.Mean {
		pc.Wins[st.Strategy] = map[int]int{}
		for _, sc := range rep.Scores {
			if sc.Strategy != st.Strategy || !slices.Contains(pc.Spaces, sc.Space) {
				continue
			}
			for _, k := range rep.Ks {
				theirs, _ := p.raw[sc.Space][pc.Best[k].Strategy][strconv.Itoa(k)].(float64)
				if sc.At[k] > theirs {
					pc.Wins[st.Strategy][k]++
				}
			}
		}
	}
	pc.To95 = map[string]peerTo95{}
	for _, sp := range pc.Spaces {
		var b peerTo95
		for _, n := range names {
			v, ok := p.raw[sp][n]["evals_to_95"].(float64)
			if ok && (b.Value == nil || v < *b.Value) {
				b = peerTo95{Strategy: n, Value: &v}
			}
		}
		pc.To95[sp] = b
	}
	return pc
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
