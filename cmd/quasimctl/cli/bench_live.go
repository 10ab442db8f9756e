package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/opencl"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/spec"
	"github.com/quasim/quasim/internal/strategies"
)

type benchLiveOptions struct {
	strategies []string
	budget     int
	batch      int
	seeds      int
	firstSeed  uint64
	problem    string
	brute      bool
	cache      string
	optimum    string
	json       string
	poclCache  bool
	noRace     bool
	finalists  int
	rounds     int
	quiet      bool
	timeLimit  time.Duration
	verbose    bool
	within     float64
	share      float64
}

// errTimeLimit ends a run's search when --time-limit has passed.
var errTimeLimit = errors.New("time limit reached")

func newBenchLiveCommand() *cobra.Command {
	var o benchLiveOptions
	cmd := &cobra.Command{
		Use:   "live SPEC --strategy S [--budget N] [--seeds K] | live SPEC --brute-force --cache FILE",
		Short: "Tune an OpenCL spec on this machine's device with search strategies, timed end to end (no daemon needed)",
		Long: `bench live runs each strategy, once per seed, on the kernel of an opencl
spec (evaluator: opencl) on the real device, as quasimd would measure it,
in a worker process of its own started afresh for each run, and reports per
run the best kernel time found, the evaluations it took, and the wall time
of the whole run: the worker's start, every compilation, launch and check.
Nothing is stored and nothing is certified.

--brute-force measures every valid config instead and, with --cache,
writes them as a Kernel Tuner cache file that "quasimctl bench --space"
replays. --optimum names such a file: each run is then scored by the
brute force's time of the best config it found (optimum / that time), so
noise in the run's own measurement does not count for or against it.

As in quasimd, the best few configs of the search (--finalists) are then
measured again, each once in --confirm-rounds fresh worker processes, and
the one with the lowest median time, the search's included, is the run's
best: on pocl a config's time moves with the process that measures it, so
the search's best alone is often the config that drew a lucky process.
The wall time includes it.

As in quasimd, a config whose first runs already put it well above the
best time so far (evaluate.Reps.Outpaced) is not measured further;
--no-race measures every config to the full repetition rule.

pocl keeps its own cache of compiled kernels. Unless --pocl-cache, each run
gives it an empty directory of its own (POCL_CACHE_DIR), removed after the
run, so every config is compiled once a run, as on a first run; within the
run the worker's compile helpers (opencl.compile_ahead) hand programs to
the worker through it.`,
		Args: exactArgs(1, "SPEC"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBenchLive(cmd.Context(), args[0], o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVar(&o.strategies, "strategy", []string{"portfolio"}, "strategies to run, comma separated ("+strings.Join(strategies.Names(), ", ")+")")
	fs.IntVar(&o.budget, "budget", 50, "unique evaluations per run")
	fs.IntVar(&o.batch, "batch", 4, "configs the strategy proposes at once, as quasimd asks them; the worker builds a batch side by side (opencl.compile_ahead)")
	fs.IntVar(&o.seeds, "seeds", 1, "runs per strategy, seeds --seed, --seed+1, ...")
	fs.Uint64Var(&o.firstSeed, "seed", 1, "first seed")
	fs.StringVar(&o.problem, "problem", "", "problem to tune (default: the spec's first)")
	fs.BoolVar(&o.brute, "brute-force", false, "measure every valid config")
	fs.StringVar(&o.cache, "cache", "", "with --brute-force: write the measurements as a Kernel Tuner cache file")
	fs.StringVar(&o.optimum, "optimum", "", "a brute-force cache file of the same kernel, problem and device to score runs by")
	fs.StringVar(&o.json, "json", "", "write every run (trace included) as JSON to this file")
	fs.BoolVar(&o.poclCache, "pocl-cache", false, "let pocl reuse kernels it compiled in earlier runs")
	fs.BoolVar(&o.noRace, "no-race", false, "measure every config fully, even one clearly slower than the best so far (as quasimd races, so does bench live by default)")
	fs.IntVar(&o.finalists, "finalists", evaluate.DefaultFinalists, "the search's best configs measured again in fresh worker processes before one is crowned (0 or 1: the search's best alone)")
	fs.IntVar(&o.rounds, "confirm-rounds", evaluate.DefaultConfirmRounds, "fresh worker processes each finalist is measured in")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	fs.Float64Var(&o.within, "finalists-within", 0, "only configs whose search time is within this factor of the search's best become finalists (0: no bound); with none but the best, the search's best stands unmeasured again")
	fs.Float64Var(&o.share, "confirm-share", 0, "measure the finalists again only when that would take at most this fraction of the search's wall time, estimated from the search's own start and evaluations (0: no bound)")
	fs.BoolVar(&o.verbose, "verbose", false, "a line on stderr for each evaluation as it returns (config, status, time), and the worker's own lines")
	fs.DurationVar(&o.timeLimit, "time-limit", 0, "end each run's search once this long has passed since the run started, budget left or not (0: no limit); its finalists are measured after it")
	return cmd
}

// liveRun is one strategy's run, as --json writes it.
type liveRun struct {
	Strategy string  `json:"strategy"`
	Seed     uint64  `json:"seed"`
	Raced    bool    `json:"raced"` // configs clearly slower than the best were raced (not --no-race)
	Evals    int     `json:"evals"`
	BestKey  string  `json:"best_key"`
	BestMS   float64 `json:"best_ms"` // as this run measured it (the median over the finalists' processes)
	// SearchKey and SearchMS are the search's best before the finalists
	// were measured again.
	SearchKey string              `json:"search_key,omitempty"`
	SearchMS  float64             `json:"search_ms,omitempty"`
	Finalists []evaluate.Finalist `json:"finalists,omitempty"`
	ConfirmS  float64             `json:"confirm_s,omitempty"` // of the wall time: measuring the finalists again
	// ConfirmError says why the search's best stands without the
	// finalists' medians: no fresh worker, or every finalist failed.
	ConfirmError string `json:"confirm_error,omitempty"`
	// ConfirmSkipped says why the finalists were not measured again
	// under --confirm-share.
	ConfirmSkipped string           `json:"confirm_skipped,omitempty"`
	TrueMS         float64          `json:"true_ms"`                // the brute force's time of BestKey (with --optimum)
	Fraction       float64          `json:"fraction"`               // optimum / TrueMS (with --optimum)
	To95           int              `json:"evals_to_95"`            // evaluations until within 95% of the optimum; 0: never
	To95S          float64          `json:"seconds_to_95"`          // seconds from the run's start until then; 0: never
	TimeLimited    bool             `json:"time_limited,omitempty"` // the search ended at --time-limit
	WallS          float64          `json:"wall_s"`                 // the whole run
	DoneS          []float64        `json:"done_s,omitempty"`       // seconds from the run's start until each evaluation returned
	CompileS       float64          `json:"compile_s"`              // of which compiling
	Trace          []evaluate.Trial `json:"trace,omitempty"`        // every evaluation in order
}

func runBenchLive(ctx context.Context, path string, o benchLiveOptions, w, errw io.Writer) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sp, err := spec.Parse(path, data)
	if err != nil {
		return badInput(err) // exit 2: a spec that does not load is the caller's to fix
	}
	if sp.Evaluator != "opencl" {
		return usagef("%s: evaluator %q: bench live runs opencl specs", path, sp.Evaluator)
	}
	if o.finalists < 0 {
		return usagef("--finalists %d: must not be negative", o.finalists)
	}
	if o.timeLimit < 0 || (o.timeLimit > 0 && o.brute) {
		return usagef("--time-limit %v: want a positive duration, with --strategy (--brute-force measures every config)", o.timeLimit)
	}
	if o.within < 0 || (o.within > 0 && o.within < 1) {
		return usagef("--finalists-within %g: want 0 (no bound) or a factor of 1 or more", o.within)
	}
	if o.share < 0 {
		return usagef("--confirm-share %g: want 0 (no bound) or a fraction above 0", o.share)
	}
	if o.rounds < 1 {
		return usagef("--confirm-rounds %d: want 1 or more", o.rounds)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	sp.OpenCLRun = &spec.OpenCLRun{Worker: []string{exe, opencl.WorkerMode}}
	if o.verbose && !o.quiet {
		sp.HarnessLog = errw // the worker's own lines: problems prepared, compile helpers started
	}
	if o.problem != "" {
		dims, err := evaluate.ParseDims(o.problem)
		if err != nil {
			return usagef("--problem %q: %v", o.problem, err)
		}
		sp.Problems = []evaluate.Problem{{Dims: dims, Names: sp.ProblemDims, Name: o.problem}}
	}
	sp.Problems = sp.Problems[:1]
	var truth map[string]float64
	var optimum float64
	if o.optimum != "" {
		if truth, optimum, err = readOptimum(o.optimum); err != nil {
			return err
		}
	}
	progress := func(format string, args ...any) {
		if !o.quiet {
			fmt.Fprintf(errw, format+"\n", args...)
		}
	}
	if o.brute {
		return bruteForce(ctx, sp, o, w, progress)
	}
	var runs []liveRun
	for _, name := range o.strategies {
		f, err := strategies.Parse(name)
		if err != nil {
			return usagef("--strategy %q: %v", name, err)
		}
		for i := range o.seeds {
			seed := o.firstSeed + uint64(i)
			r, err := liveOnce(ctx, sp, f, name, seed, o, progress)
			if err != nil {
				return err
			}
			if truth != nil {
				r.score(truth, optimum)
			}
			runs = append(runs, r)
			progress("%s seed %d: best %s %.4f ms after %d evals, %.1f s (%.1f s compiling)", name, seed, r.BestKey, r.BestMS, r.Evals, r.WallS, r.CompileS)
		}
	}
	printLive(w, runs, truth != nil)
	if o.json != "" {
		b, err := json.MarshalIndent(runs, "", " ")
		if err != nil {
			return err
		}
		return os.WriteFile(o.json, append(b, '\n'), 0o644)
	}
	return nil
}

// liveOnce is one run: a fresh worker, the strategy asking one config at
// a time until the budget is spent or the space exhausted.
func liveOnce(ctx context.Context, sp *spec.Spec, f evolve.Factory, name string, seed uint64, o benchLiveOptions, progress func(string, ...any)) (liveRun, error) {
	start := time.Now()
	sp, done, err := freshPoclCache(sp, o)
	if err != nil {
		return liveRun{}, err
	}
	defer done()
	jobs, err := sp.Jobs()
	if err != nil {
		return liveRun{}, err
	}
	job := jobs[0]
	defer closeEvaluator(job.Evaluator)
	r := liveRun{Strategy: name, Seed: seed, Raced: !o.noRace}
	bs := evolve.BenchSpace{Name: sp.Name, Space: job.Space, Measure: func(c genome.Config) (evolve.Measurement, error) {
		if o.timeLimit > 0 && time.Since(start) >= o.timeLimit {
			return evolve.Measurement{}, errTimeLimit
		}
		tr, err := job.Evaluator.Evaluate(ctx, c, job.Problem)
		if err != nil {
			return evolve.Measurement{}, err
		}
		r.Trace = append(r.Trace, tr)
		if o.verbose && !o.quiet {
			progress("%s", evalLine(tr))
		}
		r.DoneS = append(r.DoneS, time.Since(start).Seconds())
		r.CompileS += tr.PhasesMS["compilation"] / 1000
		if tr.OK() && (r.BestKey == "" || tr.Time < r.BestMS) {
			r.BestKey, r.BestMS = tr.Key, tr.Time
			if racer, ok := job.Evaluator.(evaluate.Racer); ok && !o.noRace {
				racer.Race(job.Problem, r.BestMS)
			}
		}
		return evolve.Measurement{Key: tr.Key, Status: string(tr.Status), Time: tr.Time, OK: tr.OK()}, nil
	}}
	if pf, ok := job.Evaluator.(evaluate.Prefetcher); ok {
		bs.Prefetch = func(cs []genome.Config) { pf.Prefetch(cs, job.Problem) }
	}
	if _, err := evolve.Run(ctx, bs, f, seed, evolve.RunOptions{Budget: o.budget, Batch: o.batch}); errors.Is(err, errTimeLimit) {
		r.TimeLimited = true
	} else if err != nil {
		return r, err
	}
	r.Evals = len(r.Trace)
	if err := r.confirm(ctx, job.Evaluator, job.Problem, job.Space, o, progress); err != nil {
		return r, err
	}
	r.WallS = time.Since(start).Seconds()
	return r, nil
}

// confirm measures the run's best configs again in fresh workers, as the
// tuner does before it certifies, and crowns the best by their medians.
func (r *liveRun) confirm(ctx context.Context, ev evaluate.Evaluator, p evaluate.Problem, sp *genome.Space, o benchLiveOptions, progress func(string, ...any)) error {
	rf, ok := ev.(evaluate.Refresher)
	if !ok || o.finalists < 2 || o.rounds < 1 {
		return nil
	}
	best := map[string]float64{}
	for _, tr := range r.Trace {
		if t, seen := best[tr.Key]; tr.OK() && (!seen || tr.Time < t) {
			best[tr.Key] = tr.Time
		}
	}
	var fs []evaluate.Finalist
	for k, t := range best {
		c, err := sp.ParseKey(k)
		if err != nil {
			return err
		}
		fs = append(fs, evaluate.Finalist{Config: c, Key: k, TimesMS: []float64{t}})
	}
	if len(fs) < 2 {
		return nil
	}
	slices.SortFunc(fs, func(a, b evaluate.Finalist) int {
		return cmp.Or(cmp.Compare(a.TimesMS[0], b.TimesMS[0]), strings.Compare(a.Key, b.Key))
	})
	fs = fs[:min(len(fs), o.finalists)]
	if o.within > 0 {
		fs = slices.DeleteFunc(fs, func(f evaluate.Finalist) bool { return f.TimesMS[0] > o.within*fs[0].TimesMS[0] })
		if len(fs) < 2 {
			progress("no finalist within %gx of the search's best: it stands", o.within)
			return nil
		}
	}
	if o.share > 0 {
		if est, search := confirmCost(r.DoneS, len(fs), o.rounds); est > o.share*search {
			r.ConfirmSkipped = fmt.Sprintf("measuring %d finalists in %d fresh workers would take about %.1f s, more than %g of the search's %.1f s", len(fs), o.rounds, est, o.share, search)
			progress("finalists not measured again: %s; the search's best stands", r.ConfirmSkipped)
			return nil
		}
	}
	t0 := time.Now()
	ranked, err := evaluate.Confirm(ctx, rf, p, fs, o.rounds, nil)
	r.ConfirmS = time.Since(t0).Seconds()
	r.SearchKey, r.SearchMS = r.BestKey, r.BestMS
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		// As the tuner: the search's best stands, and the run says why.
		r.ConfirmError = err.Error()
		progress("finalists not measured again (%v): the search's best stands", err)
		return nil
	}
	r.Finalists = ranked
	if ranked[0].MedianMS > 0 {
		r.BestKey, r.BestMS = ranked[0].Key, ranked[0].MedianMS
	} else {
		r.ConfirmError = "every finalist failed in the fresh processes"
	}
	progress("finalists, median of the search and %d fresh processes: %s (%.1f s)", o.rounds, finalistList(ranked), r.ConfirmS)
	return nil
}

// confirmCost estimates, from the seconds since the run's start at which
// each evaluation returned, what measuring n finalists in each of rounds
// fresh workers costs: a fresh worker starts as the run's did, so its
// first finalist costs what the run's first evaluation took from the
// start, and each further one an evaluation's mean; and the search's wall
// time so far.
func confirmCost(done []float64, n, rounds int) (est, search float64) {
	if len(done) == 0 {
		return 0, 0
	}
	search = done[len(done)-1]
	each := search
	if len(done) > 1 {
		each = (search - done[0]) / float64(len(done)-1)
	}
	return float64(rounds) * (done[0] + float64(n-1)*each), search
}

func finalistList(fs []evaluate.Finalist) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.4f ms", f.Key, f.MedianMS)
		if f.Failed > 0 {
			fmt.Fprintf(&b, " (failed in %d)", f.Failed)
		}
	}
	return b.String()
}

// freshPoclCache gives sp's worker an empty pocl cache directory, unless
// --pocl-cache; done removes it.
func freshPoclCache(sp *spec.Spec, o benchLiveOptions) (*spec.Spec, func(), error) {
	if o.poclCache {
		return sp, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "quasim-pocl-")
	if err != nil {
		return nil, nil, err
	}
	c, run := *sp, *sp.OpenCLRun
	run.Env = append(slices.Clip(run.Env), "POCL_CACHE_DIR="+dir, "POCL_KERNEL_CACHE=1")
	c.OpenCLRun = &run
	return &c, func() { os.RemoveAll(dir) }, nil
}

func closeEvaluator(ev evaluate.Evaluator) {
	if c, ok := ev.(io.Closer); ok {
		c.Close()
	}
}

// score sets the run's fraction by the brute force's times.
func (r *liveRun) score(truth map[string]float64, optimum float64) {
	best := math.Inf(1)
	for i, tr := range r.Trace {
		if t, ok := truth[tr.Key]; ok && tr.OK() && t < best {
			best = t
			if r.To95 == 0 && optimum/t >= 0.95 {
				r.To95 = i + 1
				if i < len(r.DoneS) {
					r.To95S = r.DoneS[i]
				}
			}
		}
	}
	if r.BestKey != "" {
		r.TrueMS = truth[r.BestKey]
	}
	if !math.IsInf(best, 1) {
		r.Fraction = optimum / best
	}
}

// readOptimum reads a cache file's valid times by key and their minimum.
func readOptimum(path string) (map[string]float64, float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	var f struct {
		Cache map[string]map[string]any `json:"cache"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]float64{}
	opt := math.Inf(1)
	for k, e := range f.Cache {
		if t, ok := e["time"].(float64); ok && t > 0 {
			out[k] = t
			opt = min(opt, t)
		}
	}
	if len(out) == 0 {
		return nil, 0, fmt.Errorf("%s: no valid time in its cache", path)
	}
	return out, opt, nil
}

func printLive(w io.Writer, runs []liveRun, scored bool) {
	cols := []string{"STRATEGY", "SEED", "EVALS", "BEST_MS", "WALL_S", "COMPILE_S", "BEST"}
	if scored {
		cols = append(cols, "TRUE_MS", "FRACTION", "TO95", "TO95_S")
	}
	t := newTable(w, cols...)
	for _, r := range runs {
		row := []string{r.Strategy, fmt.Sprint(r.Seed), fmt.Sprint(r.Evals), fmt.Sprintf("%.4f", r.BestMS),
			fmt.Sprintf("%.1f", r.WallS), fmt.Sprintf("%.1f", r.CompileS), r.BestKey}
		if scored {
			to95, to95s := "-", "-"
			if r.To95 > 0 {
				to95, to95s = fmt.Sprint(r.To95), fmt.Sprintf("%.1f", r.To95S)
			}
			row = append(row, fmt.Sprintf("%.4f", r.TrueMS), fmt.Sprintf("%.3f", r.Fraction), to95, to95s)
		}
		t.row(row...)
	}
	t.flush()
}

// bruteForce measures every valid config and writes a Kernel Tuner cache.
func bruteForce(ctx context.Context, sp *spec.Spec, o benchLiveOptions, w io.Writer, progress func(string, ...any)) error {
	start := time.Now()
	sp, done, err := freshPoclCache(sp, o)
	if err != nil {
		return err
	}
	defer done()
	jobs, err := sp.Jobs()
	if err != nil {
		return err
	}
	job := jobs[0]
	defer closeEvaluator(job.Evaluator)
	all := job.Space.All()
	progress("%s: %d valid configs at problem %s on %s", sp.Name, len(all), job.Problem.Name, job.Evaluator.Device())
	cache := map[string]map[string]any{}
	params := job.Space.Params()
	best, bestKey := math.Inf(1), ""
	counts := map[evaluate.Status]int{}
	pf, _ := job.Evaluator.(evaluate.Prefetcher)
	for i, c := range all {
		if pf != nil { // the worker builds the next ones side by side
			pf.Prefetch(all[i:min(len(all), i+8)], job.Problem)
		}
		tr, err := job.Evaluator.Evaluate(ctx, c, job.Problem)
		if err != nil {
			return err
		}
		counts[tr.Status]++
		e := map[string]any{}
		for j, p := range params {
			e[p.Name] = p.Values[c[j]].Native()
		}
		switch tr.Status {
		case evaluate.StatusOK:
			e["time"], e["times"] = tr.Time, tr.Times
			if tr.Time < best {
				best, bestKey = tr.Time, tr.Key
			}
		case evaluate.StatusInvalid:
			e["time"] = "InvalidConfig"
		case evaluate.StatusCompile:
			e["time"] = "CompilationFailedConfig"
		default:
			e["time"] = "RuntimeFailedConfig"
		}
		e["quasim_status"] = string(tr.Status)
		if tr.Error != "" {
			e["quasim_error"] = tr.Error
		}
		for name, col := range map[string]string{"compilation": "compile_time", "benchmark": "benchmark_time", "framework": "framework_time", "validation": "verification_time"} {
			if v, ok := tr.PhasesMS[name]; ok {
				e[col] = v
			}
		}
		cache[tr.Key] = e
		if (i+1)%50 == 0 || i+1 == len(all) {
			progress("%d/%d configs, %.0f s, best %s %.4f ms", i+1, len(all), time.Since(start).Seconds(), bestKey, best)
		}
	}
	keys := make([]string, len(params))
	tp := map[string][]any{}
	for i, p := range params {
		keys[i] = p.Name
		for _, v := range p.Values {
			tp[p.Name] = append(tp[p.Name], v.Native())
		}
	}
	out := ktCache{
		DeviceName: job.Evaluator.Device(), KernelName: sp.OpenCL.Kernel, ProblemSize: job.Problem.Dims,
		TuneParamsKeys: keys, TuneParams: tp, Objective: "time",
		QuasimSpec: sp.Name, QuasimWallS: time.Since(start).Seconds(), Cache: cache,
	}
	var summary []string
	for _, st := range evaluate.Statuses {
		if counts[st] > 0 {
			summary = append(summary, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	fmt.Fprintf(w, "%s at %s on %s: %d configs (%s) in %.0f s; optimum %s %.4f ms\n",
		sp.Name, job.Problem.Name, job.Evaluator.Device(), len(all), strings.Join(summary, ", "), time.Since(start).Seconds(), bestKey, best)
	if o.cache == "" {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(o.cache, append(b, '\n'), 0o644)
}

// ktCache is a Kernel Tuner cache file. Its fields are in Kernel Tuner's
// order, with "cache" last: Kernel Tuner reopens a file for appending by
// cutting its closing "}\n}", so a file whose entries come earlier cannot
// be read back by it (simulation_mode or a resumed run).
type ktCache struct {
	DeviceName     string                    `json:"device_name"`
	KernelName     string                    `json:"kernel_name"`
	ProblemSize    []int                     `json:"problem_size"`
	TuneParamsKeys []string                  `json:"tune_params_keys"`
	TuneParams     map[string][]any          `json:"tune_params"`
	Objective      string                    `json:"objective"`
	QuasimSpec     string                    `json:"quasim_spec"`
	QuasimWallS    float64                   `json:"quasim_wall_s"`
	Cache          map[string]map[string]any `json:"cache"`
}

// evalLine is --verbose's line for one evaluation.
func evalLine(tr evaluate.Trial) string {
	if tr.OK() {
		return fmt.Sprintf("%s: %.4f ms (%d runs, %.0f ms compiling)", tr.Key, tr.Time, len(tr.Times), tr.PhasesMS["compilation"])
	}
	msg := tr.Error
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return fmt.Sprintf("%s: %s %s", tr.Key, tr.Status, msg)
}
