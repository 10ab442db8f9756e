// Package onnx derives a memgraph.Graph from an ONNX model (a serialized
// ModelProto) as exporters write it: the main graph's nodes in file order
// and every non-initializer tensor they read or write, sized by shape
// inference of its own.
//
// It reads the protobuf wire format with google.golang.org/protobuf's
// protowire and the field numbers of onnx.proto, reading only the fields
// it needs, so it needs no generated code. It does no I/O.
//
// # Shapes
//
// The graph inputs' shapes come from the model, a dimension given as a
// name (dim_param, such as "batch") from Options.Dims, and any dim,
// named or not, from Options.Dims as TENSOR[K] ("input[1]"); a graph
// input's dim still unknown takes Options.Unknown when set, else Read
// fails naming the tensor and the dim. From there, shape inference
// carries shapes through the operators PyTorch's exporter, tf2onnx and
// Barracuda's converter emit (opInfer in ops.go: the shape operators
// Shape, Gather, Concat, Unsqueeze, Squeeze, Reshape, Flatten, Slice,
// Split, Pad, ConstantOfShape, Resize, Transpose, Cast, Expand, Tile,
// Range, Where and the arithmetic on shape tensors, convolutions and
// pooling, MatMul and Gemm, reductions, RNNs, element-wise operators), and
// constant folding computes the values of small tensors (up to 65,536
// elements) that shape subgraphs compute (Shape → Gather → Concat →
// Reshape), as ONNX Runtime's constant folding does before a run. A
// shape the inference computes wins over the model's value_info (traced
// at another size); value_info fills in what inference leaves unknown,
// and its element type wins. An operator the inference does not cover
// leaves its outputs unknown: then value_info must size them, else Read
// fails naming the tensor and the operator. Options.Unknown stands in
// for the dims of outputs whose size depends on the data (NonZero,
// NonMaxSuppression, a Loop without a trip count) and only those.
//
// Initializers (weights, sparse or not) are constants the runtime keeps
// outside the activation arena, so they are not planned; an initializer
// also listed as a graph input (a default, IR version < 4) is a weight
// too. So is the output of a Constant node, and of every node whose
// outputs folding computed: such a node is not an op of the graph.
//
// # Control flow
//
// The subgraphs of If (then_branch, else_branch) and Loop (body) are
// read, at any depth. A name of an outer scope that a subgraph reads
// (an implicit input) lives until the node that holds the subgraph ends:
// the node is one of its consumers. Each subgraph is planned in an
// arena of its own (its tensors, not the outer ones it reads), and the
// node holds a tensor NODE#subgraphs, alive while it runs, as large as
// the largest of its subgraphs' arenas: an If's branches never run
// together, and a Loop body's tensors die with each trip. An If's
// outputs take the larger of its branches' shapes, when both branches
// size them. With a constant condition only the branch taken is inferred
// and planned; Options.Values gives integer graph inputs the values every
// run passes, so a condition that follows from them (silero VAD's sample
// rate) folds. A refusal inside a branch of an If whose condition is not
// a constant names the graph inputs the condition follows from. A Loop's scan outputs stack one body
// output per trip, so they need a constant trip count (or Unknown). Scan
// and other nodes with subgraphs are refused naming the op, and so is a
// subgraph that redefines a name of an outer scope.
//
// CheckPlan verifies a plan of the main graph against the model itself,
// with lifetimes derived from the nodes independently of Read, the
// reads of subgraphs included: no two tensors alive together share a
// byte.
//
// This package has no compatibility promise outside quasim.
package onnx
