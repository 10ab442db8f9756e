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
// Package memgraph/tflite derives such graphs from TensorFlow Lite models.
package memgraph
