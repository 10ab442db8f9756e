package onnx

import (
	"strings"
	"testing"

	"github.com/quasim/quasim/memgraph"
)

func TestReadConvNet(t *testing.T) {
	g, err := Read(convNet(), "conv", Options{Dims: map[string]int64{"batch": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Ops) != 3 || g.Ops[0].ID != "conv" || g.Ops[0].Kind != "Conv" {
		t.Fatalf("ops %+v: want conv, relu, add (the Constant is a weight)", g.Ops)
	}
	want := map[string]struct {
		bytes    int64
		producer string
		cons     string
	}{
		"x":   {3 * 64 * 4, "", "conv"},
		"y":   {4 * 64 * 4, "conv", "relu,add"},
		"z":   {4 * 64 * 2, "relu", "add"},
		"out": {2 * 4 * 64 * 4, "add", ""}, // k, a Constant with no value, leaves Add unknown: value_info's batch stands
	}
	if len(g.Tensors) != len(want) {
		t.Fatalf("tensors %+v: want x, y, z, out (no weights)", g.Tensors)
	}
	for _, tn := range g.Tensors {
		w, ok := want[tn.ID]
		if !ok || tn.Bytes != w.bytes || tn.Producer != w.producer || strings.Join(tn.Consumers, ",") != w.cons {
			t.Errorf("tensor %+v: want %+v", tn, w)
		}
	}
	if !g.Tensors[0].Input || !g.Tensors[3].Output {
		t.Errorf("x should be an input and out an output: %+v", g.Tensors)
	}
	if _, err := memgraph.Plan(g, memgraph.Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestReadErrors(t *testing.T) {
	good := convNet()
	cases := []struct {
		name string
		data []byte
		opt  Options
		want string
	}{
		{"symbolic dim without a value", modelMsg(
			part{graphInput, valueInfo("x", 1, "batch", 2)},
		), Options{}, `tensor "x": dim 0 is symbolic ("batch")`},
		{"inputs that share a dim disagree", modelMsg(
			part{graphInput, valueInfo("x", 1, "batch", 4)},
			part{graphInput, valueInfo("y", 1, "batch", 4)},
			part{graphNode, nodeMsg("n", "Add", []string{"x", "y"}, []string{"z"})},
		), Options{Dims: map[string]int64{"x[0]": 1, "y[0]": 2}},
			`dim "batch" is 1 in graph input x[0] but 2 in graph input y[0]`},
		{"truncated", good[:len(good)-3], Options{}, "model: field 7: unexpected EOF"},
		{"empty", nil, Options{}, "model.graph: missing"},
		{"no shape", modelMsg(
			part{graphInput, valueInfo("x", 1)},
		), Options{}, `tensor "x": no shape`},
		{"no type", modelMsg(
			part{graphInput, valueInfo("x", 1, 2)},
			part{graphNode, nodeMsg("n", "Frobnicate", []string{"x"}, []string{"y"})},
		), Options{}, `node[0] (Frobnicate "n"): tensor "y": no type in the graph's input, output or value_info (memgraph's shape inference does not cover Frobnicate`},
		{"string tensor", modelMsg(
			part{graphInput, valueInfo("x", 8, 2)},
		), Options{}, `tensor "x": elem_type 8 has no fixed size`},
		{"unknown dim", modelMsg(
			part{graphInput, valueInfo("x", 1, -1, 2)},
		), Options{}, `tensor "x": dim 0 is unknown`},
		{"no producer", modelMsg(
			part{graphInput, valueInfo("x", 1, 2)},
			part{graphNode, nodeMsg("n", "Relu", []string{"q"}, []string{"y"})},
			part{graphValueInfo, valueInfo("y", 1, 2)},
		), Options{}, `node[0] (Relu "n"): input "q": no producer`},
		{"two producers", modelMsg(
			part{graphInput, valueInfo("x", 1, 2)},
			part{graphNode, nodeMsg("n", "Relu", []string{"x"}, []string{"x"})},
		), Options{}, `node[0] (Relu "n"): output "x": already produced by model.graph.input`},
		// The first producer is folded into a constant (the Shape of a
		// known shape), so only the parse-time check sees both.
		{"two producers, one folded", modelMsg(
			part{graphInput, valueInfo("x", 1, 2)},
			part{graphNode, nodeMsg("sh", "Shape", []string{"x"}, []string{"s"})},
			part{graphNode, nodeMsg("r", "Relu", []string{"x"}, []string{"s"})},
			part{graphOutput, valueInfo("s", 1, 2)},
		), Options{}, `node[1] (Relu "r"): output "s": already produced by model.graph.node[0] (Shape "sh")`},
		{"huge shape", modelMsg(
			part{graphInput, valueInfo("x", 1, 1<<30, 1<<30, 1<<30)},
		), Options{}, `tensor "x": shape overflows`},
		{"over the tensor limit", modelMsg(
			part{graphInput, valueInfo("x", 1, 1<<20, 1<<20)},
		), Options{}, `tensor "x": 1099511627776 elements of 32 bits, over memgraph's limit`},
		{"graph output nobody makes", modelMsg(
			part{graphOutput, valueInfo("y", 1, 2)},
		), Options{}, `model.graph.output "y": no node produces it`},
		{"node without op_type", modelMsg(
			part{graphNode, field(nil, nodeName, []byte("n"))},
		), Options{}, "model.graph.node[0].op_type: empty"},
		{"wrong wire type", varint(nil, modelGraph, 3), Options{}, "model.graph: wire type 0, want 2"},
		{"bad dim wire type", modelMsg(
			part{graphInput, field(field(nil, valueName, []byte("x")), valueType, field(nil, typeTensor,
				field(nil, tensorShape, field(nil, shapeDim, field(nil, dimValue, []byte{1})))))},
		), Options{}, "model.graph.input[0].type.tensor_type.shape.dim[0].dim_value: wire type 2, want 0"},
	}
	for _, c := range cases {
		_, err := Read(c.data, "m", c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestReadOutOfOrder: ONNX nodes must be topologically sorted; a node
// that reads a later node's output is refused by memgraph's order check.
func TestReadOutOfOrder(t *testing.T) {
	data := modelMsg(
		part{graphInput, valueInfo("x", 1, 2)},
		part{graphNode, nodeMsg("b", "Relu", []string{"y"}, []string{"z"})},
		part{graphNode, nodeMsg("a", "Relu", []string{"x"}, []string{"y"})},
		part{graphValueInfo, valueInfo("y", 1, 2)},
		part{graphValueInfo, valueInfo("z", 1, 2)},
	)
	_, err := Read(data, "m", Options{})
	if err == nil || !strings.Contains(err.Error(), `input "y": no producer`) {
		t.Fatalf("got %v, want the unsorted input named", err)
	}
}

func TestUnknownOption(t *testing.T) {
	data := modelMsg(
		part{graphInput, valueInfo("x", 1, "n", -1, 3)},
	)
	g, err := Read(data, "m", Options{Unknown: 2})
	if err != nil || g.Tensors[0].Bytes != 2*2*3*4 {
		t.Fatalf("got %+v, %v; want x of 2x2x3 floats", g, err)
	}
	if _, err := Read(data, "m", Options{Dims: map[string]int64{"n": -1}, Unknown: 2}); err == nil || !strings.Contains(err.Error(), `dim "n" given as -1`) {
		t.Fatalf("got %v, want the negative dim refused", err)
	}
}
