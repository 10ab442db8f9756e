// Package pipeline runs a pipeline of quasim's builtin kernels for real and
// checks the causal model against it, as Coz checks its virtual speedups:
// it records spans of baseline iterations, predicts what a perturbation (a
// kernel delayed, or run at another config) changes end to end, runs the
// perturbation and measures the change.
//
// # The builtin pipeline
//
// Builtin is four launches on two goroutines (streams), with a join:
//
//	stream a:  conv2d 512,512,7 ─────────────┐──> reduce 2097152
//	stream b:  conv2d 256,256,5 ──> sgemm 128,128,128
//	                        └── reduce waits for it (a join) ──┘
//
// The big convolution and the reduce are the critical path; the small
// convolution and the sgemm run beside them with several ms of slack, so
// making them faster gains nothing end to end. The machine this was built
// on has 2 cores, so at most two kernels run at once (one per stream) and
// every kernel runs with one worker: concurrency is real, but the streams do
// not fight over cores, which would make a kernel's time depend on what runs
// beside it more than the model (which keeps durations fixed) allows.
//
// # Runs
//
// Runner.Run runs one iteration: each stream is a goroutine that runs its
// stages in order, waiting for the stages of other streams it joins. It
// records one causal.Span per stage with the caller's monotonic clock
// (ns), the stream, and the join as an explicit dependency. A Perturbation
// delays one stage by d after its kernel (asleep, as Coz's delays are, so
// the wait does not take CPU time from the other stream; the last 200 µs
// busily, for precision), runs it at another config, or speeds it up
// virtually by a fraction f, as Coz does: each time the stage has run for
// t, f·t joins a global pause count, and every other stream, after each of
// its kernels (before it signals a join, starts its next stage or ends),
// sleeps what that count is ahead of what it has paid. A stream woken from a join
// skips the pauses inserted while it waited: the stream that woke it paid
// them first, as Coz credits a thread woken by one that paid.
//
// # Experiments
//
// Experiment runs each perturbation in pairs: a baseline iteration and a
// perturbed one, the order alternating from pair to pair, so slow drift of
// a shared machine falls on both. For each pair it predicts the change
// from the baseline iteration's own spans: causal.Build, then the graph
// replayed with the perturbed stage's duration changed. A delay makes it
// longer by the delay as the perturbed iteration inserted it (at least d:
// a sleep wakes late on a loaded machine; Coz too accounts for its pauses
// as they happened). A config scales it by the ratio of the two configs'
// medians measured alone, one run of each in turn, since the model knows
// durations, not configs. A virtual speedup by f scales it by 1-f. The
// measured change is the perturbed iteration's end-to-end time against the
// baseline's; for a virtual speedup, its time less the pauses inserted
// (f·t per run of the stage), as Coz subtracts them: on the critical path
// the others' pauses leave the end-to-end time where it was and the
// subtraction shows a gain of f·t; beside it, with slack, the critical
// stream's pause lengthens it by f·t and the gain is about 0. Both are in percent
// of the baseline's end-to-end time and summarised by causal.Bootstrap
// (median, 95% bootstrap interval of the median). The error of a
// perturbation is |predicted - measured| between the medians, in points of
// end-to-end time. BuiltinSpeedups pairs a virtual speedup of each builtin
// stage by a fifth with a delay of it, to check one against the other;
// the daemon's experiment runs the delays and configs only (its wire
// format has no speedup), and an exec harness cannot run a speedup: it
// delays only the stage asked for.
//
// # Exec pipelines
//
// An exec harness may declare a pipeline of its own in its hello and run
// iterations of it on request (docs/kernel-authors/harness-protocol.md, section 5). Exec
// is that pipeline as a Target, the interface Experiment runs, which the
// builtin Runner implements too: the harness inserts the delays and runs
// the configs, and answers with spans on its own monotonic clock (or with
// stage times, laid out as the declared graph runs them). A config's
// scale is timed in whole iterations, one at each config in turn, since
// the harness runs its stages only as parts of its pipeline.
// ExecPerturbations are the default set: every stage delayed by a fifth
// of the end-to-end time, every tunable stage at another config.
//
// # Budget by influence
//
// Split divides an evaluation budget among tuning jobs by expected
// end-to-end gain: influence times remaining headroom (Headroom: a job's
// default time against its best known; PriorHeadroom while either is
// unknown). Influences gives each (kernel, problem) of a pipeline's
// iterations its influence, as causal's per kernel. The daemon uses them
// to split the budget of a declared pipeline's jobs (daemon/budget.go).
//
// This package has no compatibility promise outside quasim.
package pipeline
