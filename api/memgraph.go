package api

import "encoding/json"

// POST /v1/memgraph/plan plans where the tensors of a graph of kernels
// live in one arena. The body is the graph in memgraph's JSON format
// (memgraph/doc.go), or with ?format=onnx or ?format=tflite a model file
// itself. Any local reader may plan, so the daemon bounds the work: the
// body (413 over the limit), the tensors and ops (400), the planning time
// (?timeout=, capped; the search then returns its best plan so far with
// Stopped set) and the plans running at once (429 with Retry-After when
// all slots are busy). docs/kernel-authors/memgraph.md states the bounds.
//
// Query parameters:
//   - format: json (default), onnx or tflite;
//   - seed: the search's seed (default 1; a plan is reproducible for a
//     given graph, seed and a search the deadline did not stop);
//   - search=false: the better baseline only, no search;
//   - timeout: a duration such as 2s, at most the daemon's cap;
//   - dim=NAME=VALUE (repeatable) and unknown=N: ONNX dims left open;
//   - cache=SIZE/LINE/WAYS,...: add the plan's cache-miss estimate for
//     this hierarchy (e.g. 48K/64/12,2M/64/16; 0 ways: fully associative);
//   - layout=true, with cache: re-place tensors to lower the estimated
//     misses without raising the peak;
//   - bandwidth=BYTES (a second), with cap=BYTES and latency=DURATION:
//     add the prefetch schedule of the host tensors' copies.

// MemPlan is the answer of POST /v1/memgraph/plan, and what quasimctl
// memgraph plan --json prints (planned offline or not).
type MemPlan struct {
	Name       string  `json:"name,omitempty"`
	Ops        int     `json:"ops"`
	Tensors    int     `json:"tensors"`
	Order      string  `json:"order"` // "fixed" or "free"
	Peak       int64   `json:"peak"`  // arena bytes
	LowerBound int64   `json:"lower_bound"`
	Ratio      float64 `json:"ratio"`      // peak / lower bound; 1 when both are 0
	BySize     int64   `json:"by_size"`    // peak of greedy by size
	ByBreadth  int64   `json:"by_breadth"` // peak of greedy by breadth
	Strategy   string  `json:"strategy"`   // the plan kept: size, breadth or search
	// Stopped: the deadline (or the client leaving) ended the search
	// early; the plan is the best found by then.
	Stopped bool    `json:"stopped,omitempty"`
	PlanMS  float64 `json:"plan_ms"`
	// OpOrder is the order the ops run in, as op ids; only for a graph
	// whose order is free (in a fixed order it is the listed one).
	OpOrder    []string       `json:"op_order,omitempty"`
	Placements []MemPlacement `json:"placements"`
	// Schedule is the prefetch schedule of the host tensors' copies
	// (memgraph.Schedule), when asked for; Misses the plan's cache-miss
	// estimate (memgraph.MissEstimate), when asked for.
	Schedule json.RawMessage `json:"schedule,omitempty"`
	Misses   json.RawMessage `json:"misses,omitempty"`
	// Layout says what the locality layout changed (memgraph.LayoutReport:
	// misses per level before and after, tensors moved), when asked for.
	Layout json.RawMessage `json:"layout,omitempty"`
	// DurationsFromStore counts the ops whose duration quasimd filled
	// with their kernel's best measured time.
	DurationsFromStore int `json:"durations_from_store,omitempty"`
}

// MemPlacement is one tensor's place in the arena and its lifetime, in
// the graph's tensor order.
type MemPlacement struct {
	Tensor string `json:"tensor"`
	Offset int64  `json:"offset"`
	Bytes  int64  `json:"bytes"`
	First  int32  `json:"first"` // position in the op order of its first op
	Last   int32  `json:"last"`  // and of its last, inclusive
}
