// Package causal answers "which kernel should I tune, and what would it buy
// end to end?" from traces of kernel pipelines: spans of kernel launches
// with their streams and dependencies.
//
// # Spans
//
// A Span is one launch: its pipeline, iteration, kernel, problem, device,
// stream (or thread), start and end in nanoseconds, and the ids of spans it
// explicitly waits for (events, joins, flow arrows). Validate checks a batch
// whole and names the span index and field of the first problem: missing
// ids, kernels or pipelines, duplicate ids, a span ending before it starts,
// two spans overlapping on one stream, unknown or self dependencies, and
// cycles. DecodeSpans reads a JSON array of spans strictly and validates it.
// ImportChrome maps a Chrome trace event file (PyTorch profiler, Perfetto)
// to spans and reports what it dropped and why; with ProfilerStep#N
// markers it binds GPU work to its launch's step, makes each step last
// its period and recognises GPU-bound steps (see ImportChrome). A trace without
// ProfilerStep#N markers has its iterations inferred from the kernel
// sequence repeating on its streams, and its idle gaps on GPU streams
// modelled as waits (on another stream, the host, or an unseen launch);
// when no iterations are found the report warns that the figures are of
// the whole trace.
//
// # Graph
//
// Build makes the dependency graph of one pipeline: program order on each
// (device, stream) — spans sorted by start, then end, then batch order —
// plus the declared dependencies. A span with no predecessor is a root and
// keeps its recorded start. Any other span starts its lag after the latest
// end of its predecessors, where the lag is what was recorded: its start
// minus that latest end. The lag stands for launch latency and host work the
// trace does not show; it may be negative (a kernel can start before the
// launch call that enqueued it returns). So replaying the graph with the
// recorded durations gives back every recorded start and end exactly, and a
// counterfactual moves a span only when the predecessor it last waited for
// moves. Keeping each edge's own recorded gap instead would make every
// predecessor binding (each edge would reach exactly the span's start), so
// delaying any predecessor would delay the span; one lag per span keeps
// the slack the trace shows. A span marked HostWait waited for the host
// (a launch the trace does not show), not for its predecessors: it starts
// at the later of its recorded start and its predecessors' latest end
// (plus its lag when that is negative), so a faster predecessor does not
// move it. End-to-end time is the latest end minus the earliest recorded
// start. EndAt gives a view of the graph measured to the latest end among
// some spans instead (a step's GPU work: when it is done, where the host
// ends the step later), in which the spans that cannot move that end are
// no rows; SpreadOptions.End and ChromeOptions.ToGPUEnd make it.
//
// # What is exact and what is estimated
//
// Within the model everything is exact integer arithmetic in nanoseconds:
// simulated end-to-end times under any set of changed durations (Simulate,
// with Change: "kernel K x% faster", "K takes T ns", several at once, each
// scaled duration rounded to the nearest ns), the critical path, and each
// span's slack (how much longer it may take before the end-to-end time
// grows). Tests check these against a brute-force longest-path computation
// on random graphs.
//
// What the model cannot know is whether the world keeps the graph's shape:
// a faster kernel may change contention, clocks or what the host does in
// the lags. Curves (Coz's virtual-speedup plot: end-to-end speedup for a
// kernel 0, 5, ..., 50% faster) and Influence (the curve's slope over its
// first step) are predictions of the model, not measurements; Spread
// reports them over the recorded iterations (median, min, max, quartiles,
// and a bootstrap interval of the median drawn with the caller's RNG), since
// a pipeline's iterations differ. Checking predictions by experiment is the
// daemon's job, not this package's.
//
// The package does no I/O, reads no clock and uses no global RNG.
//
// This package has no compatibility promise outside quasim.
package causal
