// Package memplan reads memory graphs in the formats quasim accepts
// (memgraph's JSON, ONNX, TensorFlow Lite) and plans them into the
// answer of POST /v1/memgraph/plan (api.MemPlan), so the daemon and
// quasimctl's offline planning give the same answer for the same graph
// and seed. It does no I/O; the caller's context bounds the search.
package memplan
