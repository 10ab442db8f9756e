// Package tflite derives a memgraph.Graph from a TensorFlow Lite model
// (a .tflite FlatBuffer): the main subgraph's non-constant tensors, their
// sizes from shape and type, and the operators in execution order. An
// operator that runs another subgraph (IF, WHILE, CALL_ONCE) is refused
// naming it: that subgraph's tensors live in arenas this reader does not
// plan, so a plan of subgraph 0 alone would be too small.
//
// It reads the FlatBuffer with a small bounds-checked reader of its own
// (flatbuf.go) and the field numbers of the TFLite schema (schema.fbs),
// so it needs neither flatc nor the FlatBuffers runtime. It does no I/O.
//
// This package has no compatibility promise outside quasim.
package tflite
