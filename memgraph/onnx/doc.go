// Package onnx derives a memgraph.Graph from an ONNX model (a serialized
// ModelProto): the main graph's nodes in file order and every
// non-initializer tensor they read or write, sized from the shapes and
// element types the graph's input, output and value_info give.
//
// It reads the protobuf wire format with google.golang.org/protobuf's
// protowire and the field numbers of onnx.proto, reading only the fields
// it needs, so it needs no generated code. It does no I/O.
//
// Initializers (weights, sparse or not) are constants the runtime keeps
// outside the activation arena, so they are not planned; an initializer
// also listed as a graph input (a default, IR version < 4) is a weight
// too. So is the output of a Constant node, which the runtime folds into
// an initializer: the node is not an op of the graph.
// Subgraphs of control-flow nodes (If, Loop, Scan attributes) are not
// read: the node itself, its inputs and outputs are.
//
// A dimension given as a name (dim_param, such as "batch") takes its
// value from Options.Dims; one that is still unknown takes
// Options.Unknown when set, else Read fails naming the tensor and the
// dim. A tensor with no shape at all fails naming the tensor: run ONNX
// shape inference on such a model first.
//
// This package has no compatibility promise outside quasim.
package onnx
