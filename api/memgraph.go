package api

import "encoding/json"

// POST /v1/memgraph/plan plans where the tensors of a graph of kernels
// live in one arena. The body is the graph in memgraph's JSON format
// (memgraph/doc.go), or with ?format=onnx or ?format=tflite a model file
// itself. Any local reader may plan, so the daemon bounds the work: the
// body (413 over the limit), the tensors and ops (400), the planning time
// (?timeout=, capped; the search then returns its best plan so far with
// Stopped set) and the plans running at once (429 with Retry-After when
// all slots are busy). The README states the bounds.
//
// Query parameters:
//   - format: json (default), onnx or tflite;
//   - seed: the search's seed (default 1; a plan is reproducible for a
//     given graph, seed and a search the deadline did not stop);
//   - search=false: the better baseline only, no search;
//   - timeout: a duration such as 2s, at most the daemon's cap;
//   - dim=NAME=VALUE (repeatable) and unknown=N: ONNX dims left open.

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
	// Schedule (the prefetch schedule of host tensors) and Misses (the
	// cache-miss estimate) are not computed yet; they stay absent.
	Schedule json.RawMessage `json:"schedule,omitempty"`
	Misses   json.RawMessage `json:"misses,omitempty"`
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
