// Package memgraph plans where the tensors of a graph of kernels live in
// one arena: an offset per tensor so that no two tensors alive at the same
// time share a byte, with the arena (the peak) as small as it can make it.
//
// It is pure: no I/O, no clock, randomness only from the caller's
// *rand.Rand. It imports no quasim package. It has no compatibility
// promise outside quasim.
//
// # Contract
//
// Decode reads and checks a graph; Plan places its tensors and returns a
// Result with the offsets, the peak, the lower bound and the peaks of two
// baselines. Every plan Plan returns passed Check, an independent
// verifier (alignment, no two tensors with overlapping lifetimes
// overlapping in memory); a plan that fails it is reported as ErrBadPlan,
// never returned. With a nil Options.Rand, Plan returns the better
// baseline; with one, it also searches, bounded by Options.Iters and
// Options.Stop, and is never worse than either baseline.
//
// # Lifetimes and the lower bound
//
// Ops run in an order; a tensor lives from the op that produces it to the
// last op that reads it, inclusive. A graph input lives from the first op,
// a graph output to the last; a host tensor (one that starts in host
// memory) from its first consumer, as if its copy landed just before. The
// lower bound is the most bytes alive during any one op: no placement can
// do better.
//
// # Planners
//
// All three place tensors one at a time at the best-fit offset (the
// smallest gap, among the tensors already placed whose lifetimes overlap,
// that holds the tensor; else above them all), as TensorFlow Lite's arena
// and Pisarchyk & Lee, "Efficient Memory Management for Deep Neural Net
// Inference" (2020), do. They differ in the order of placement:
//   - greedy by size: largest tensor first, ties by first use;
//   - greedy by breadth: ops in decreasing breadth (bytes live during the
//     op), each op's live tensors largest first;
//   - search: simulated annealing over the placement order, starting from
//     the better baseline, moving a tensor (often one that reaches the
//     peak) earlier; it stops at the lower bound.
//
// When the graph's order is "free", Plan also tries op orders chosen by
// memory-aware list scheduling (the ready op that adds the fewest live
// bytes runs next) and keeps the order whose plan has the lower peak.
//
// # JSON graph format
//
//	{
//	  "name": "selfie_segmentation",          // optional
//	  "source": "where it came from",         // optional
//	  "order": "fixed",                       // "fixed" (default): ops run as listed;
//	                                          // "free": any order the edges allow
//	  "alignment": 64,                        // default for tensors; default 64
//	  "ops": [{"id": "op0", "kind": "builtin:3"}, ...],   // kind is optional
//	  "tensors": [
//	    {"id": "t0", "bytes": 4096, "input": true, "consumers": ["op0"]},
//	    {"id": "t1", "bytes": 8192, "alignment": 128,
//	     "producer": "op0", "consumers": ["op1", "op2"], "output": true},
//	    {"id": "w", "bytes": 512, "host": true, "consumers": ["op2"]},
//	    {"id": "s", "bytes": 64, "first": 1, "last": 2}
//	  ]
//	}
//
// A tensor's lifetime comes from producer and consumers (op ids), or from
// explicit first and last op positions (0-based, fixed order only). A
// tensor with no producer must be an input or a host tensor (or have
// first/last). Alignments are powers of two up to MaxAlignment.
//
// Decode rejects, with an error naming the tensor, op or field: unknown
// fields, trailing data, empty or duplicate ids, a producer or consumer
// that is not an op, a tensor with no producer, negative sizes or sizes
// over MaxTensorBytes (or all of them over MaxTotalBytes), a bad
// alignment, a consumer that runs before its producer in a fixed order,
// a cycle in a free order, and bodies, op or tensor counts over MaxBody,
// MaxOps and MaxTensors.
//
// Ops may also carry "duration_ns" (the op's run time in nanoseconds,
// for Prefetch; the daemon would fill it from the store's trials of the
// kernel; 0 when unknown) and "access", how the op walks its tensors,
// for Misses:
//
//	{"id": "mm", "duration_ns": 120000, "access": [
//	  {"tensor": "x", "pattern": "sequential", "elem": 4, "passes": 2},
//	  {"tensor": "y", "pattern": "strided", "stride": 1024},
//	  {"tensor": "z", "pattern": "tiled", "row": 512, "tile": [32, 32]},
//	  {"tensor": "w", "pattern": "loops", "offset": 0,
//	   "loops": [[4, 0], [128, 512], [128, 4]]}]}
//
// Each access is an affine loop nest over byte offsets in the tensor
// (see Access); elem defaults to 4, passes to 1. Decode rejects, naming
// the op, the access and the field: a tensor the op neither produces nor
// consumes (nor, for an explicit lifetime, runs within), an unknown
// pattern, a field of another pattern, a bad elem, offset, stride, row
// or tile, a loop that is not [count >= 1, stride >= 0], more than
// MaxLoops loops or MaxAccessCount accesses, any element past the
// tensor's bytes, and a duration outside [0, one hour].
//
// # Locality and the miss estimate
//
// Misses expands every op's accesses (an op without any reads, then
// writes, each of its tensors once in sequence) at the plan's offsets
// into a trace of cache lines, op after op in the plan's order. The
// accesses of one op interleave in lockstep, each at its own rate: the
// i-th of a stream of n happens at i/n of the op (exact when every
// stream of the op runs over the same loop nest or a prefix of it, as in
// a loop body reading a[i] and writing b[i]). Consecutive accesses of a
// stream to one line are a run; a run becomes two references, at its
// first and last access, and the accesses between count as hits. That
// is exact when each op walks one tensor (TestMissesSingleStreamExact)
// and otherwise assumes the cache holds the few lines an op touches at
// once.
//
// Mattson's LRU stack distance of each reference (distinct lines since
// the line's last reference) comes from a Fenwick tree over last-use
// times, O(log n) per reference, compacted so that memory follows the
// distinct lines. The estimate per cache level is exact for the trace:
// a per-set LRU simulation (a fully associative level by stack distance)
// on the references the level above missed, writes allocating, as
// cachegrind does; the fully associative estimate from the stack
// distance histogram of the whole trace comes beside it. A trace is
// bounded by CacheSpec.MaxRefs (ErrTraceTooLong).
//
// Layout re-places a plan's tensors (same order and lifetimes, peak no
// higher) to lower the estimated misses: the plan given, best-fit
// placements in other orders, and warm fit (each tensor where the most
// recently dead one lay, whose lines are likeliest cached); with a Rand,
// random moves of the winning order.
//
// # Prefetch schedule
//
// Prefetch takes the tensors marked host (they start in host memory), a
// copy bandwidth and latency, and an optional memory cap, and schedules
// one copy stream beside the ops, which run in the plan's order each for
// its duration_ns. Copies go in the order of first use, each as early as
// the stream is free and the cap allows: a copy holds its bytes from its
// start until its last use ends, and at every op the activations alive
// there (every non-host tensor, by the plan's lifetimes; bytes counted,
// not offsets) plus the held copies must fit the cap. Under a cap, a
// tensor used by several ops stays on the device between two uses only
// when the bytes allow (shortest gaps first), else it is copied again.
// A Schedule carries every copy and op time, the makespan, the
// no-overlap baseline (the same copies and ops, serially) and the
// compute-only lower bound. CheckSchedule verifies any schedule (copy
// stream, arrivals, op order and durations, the cap during every op);
// Prefetch never returns one that fails it (ErrBadSchedule), and names
// the op that cannot fit a cap (ErrCapTooSmall).
//
// Package memgraph/tflite derives such graphs from TensorFlow Lite models.
package memgraph
