package cli

import (
	"runtime"
	"strings"

	"github.com/spf13/cobra"

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
	noise       bool
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
(portfolio, es, forest, quantumsearch) can. --warm-from also takes prior packs (quasimctl priors
build), as quasimd --priors does.

With --noise, each evaluation shows the strategy one of the config's
recorded repetition times (Kernel Tuner's "times"), drawn by the seed and
the config, instead of their mean, as a tuner that times one run sees; k=N
is then optimum / the recorded mean time of the config the run found best
by what it was shown, which noise can mislead.

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
	fs.StringArrayVar(&o.warmFrom, "warm-from", nil, "also run each strategy warm-started by rank transfer from these recorded spaces or prior packs (*.qprior), file or directory (repeatable): per space, those of the same kernel on other devices")
	fs.BoolVar(&o.noise, "noise", false, "show strategies one recorded repetition time per evaluation instead of the mean (scored on the mean time of the config each run found best)")
	cmd.AddCommand(newBenchScoreCommand(), newBenchLiveCommand())
	return cmd
}
