package onnx

import (
	"testing"

	"github.com/quasim/quasim/memgraph"
)

// opCase builds a one-node model (on x, rank 4) of an operator whose
// parameters come from the fuzzer: the inputs and attributes exporters
// give, with any values at all.
type opCase func(a, b, c, d int64) []part

var opCases = []opCase{
	func(a, b, c, d int64) []part { // Slice
		return []part{ints("st", a), ints("en", b), ints("ax", c), ints("sp", d),
			opNode("Slice", []string{"x", "st", "en", "ax", "sp"})}
	},
	func(a, b, c, d int64) []part {
		return []part{ints("p", a, b, c, d, d, c, b, a), opNode("Pad", []string{"x", "p"})}
	},
	func(a, b, c, d int64) []part {
		return []part{ints("s", a, b), {graphNode, nodeA("n", "Split", []string{"x", "s"}, []string{"y", "y2"}, aInt("axis", c))}}
	},
	func(a, b, c, d int64) []part {
		return []part{ints("s", a, b, c), opNode("Reshape", []string{"x", "s"})}
	},
	func(a, b, c, d int64) []part { return []part{ints("s", a, b), opNode("Unsqueeze", []string{"x", "s"})} },
	func(a, b, c, d int64) []part { return []part{ints("s", a), opNode("Squeeze", []string{"x", "s"})} },
	func(a, b, c, d int64) []part {
		return []part{ints("i", a, b), {graphNode, nodeMsg("sh", "Shape", []string{"x"}, []string{"s"})},
			{graphNode, nodeA("g", "Gather", []string{"s", "i"}, []string{"g"}, aInt("axis", c))},
			opNode("Reshape", []string{"x", "g"})}
	},
	func(a, b, c, d int64) []part {
		return []part{ints("i", a), {graphNode, nodeA("n", "Gather", []string{"x", "i"}, []string{"y"}, aInt("axis", b))}}
	},
	func(a, b, c, d int64) []part {
		return []part{ints("r", a, b, c, d), opNode("Tile", []string{"x", "r"})}
	},
	func(a, b, c, d int64) []part { return []part{ints("s", a, b), opNode("Expand", []string{"x", "s"})} },
	func(a, b, c, d int64) []part {
		return []part{scalarInit("s", a), scalarInit("l", b), scalarInit("d", c), opNode("Range", []string{"s", "l", "d"})}
	},
	func(a, b, c, d int64) []part {
		return []part{ints("s", a, b), opNode("ConstantOfShape", []string{"s"})}
	},
	func(a, b, c, d int64) []part {
		return []part{ints("s", a, b, c, d), opNode("Resize", []string{"x", "", "", "s"})}
	},
	func(a, b, c, d int64) []part {
		return []part{{graphNode, nodeA("n", "Transpose", []string{"x"}, []string{"y"}, aInts("perm", a, b, c, d))}}
	},
	func(a, b, c, d int64) []part {
		return []part{{graphNode, nodeA("n", "DepthToSpace", []string{"x"}, []string{"y"}, aInt("blocksize", a))}}
	},
	func(a, b, c, d int64) []part {
		return []part{{graphInitializer, int64Tensor("w", []int64{a, 3, b, c})},
			{graphNode, nodeA("n", "Conv", []string{"x", "w"}, []string{"y"}, aInts("strides", d, d), aInts("pads", a, b, c, d))}}
	},
	func(a, b, c, d int64) []part {
		return []part{{graphNode, nodeA("n", "MaxPool", []string{"x"}, []string{"y"}, aInts("kernel_shape", a, b),
			aInts("strides", c, d), aInts("dilations", d, c), aInt("ceil_mode", a&1))}}
	},
	func(a, b, c, d int64) []part {
		return []part{ints("k", a), {graphNode, nodeA("n", "TopK", []string{"x", "k"}, []string{"y", "i"}, aInt("axis", b))}}
	},
	func(a, b, c, d int64) []part {
		return []part{{graphNode, nodeA("n", "Concat", []string{"x", "x"}, []string{"y"}, aInt("axis", a))}}
	},
	func(a, b, c, d int64) []part {
		return []part{{graphNode, nodeA("n", "Flatten", []string{"x"}, []string{"y"}, aInt("axis", a))}}
	},
	func(a, b, c, d int64) []part {
		return []part{ints("ax", a, b), {graphNode, nodeA("n", "ReduceSum", []string{"x", "ax"}, []string{"y"}, aInt("keepdims", c&1))}}
	},
	func(a, b, c, d int64) []part {
		return []part{{graphNode, nodeA("n", "ConvTranspose", []string{"x", "x"}, []string{"y"}, aInts("strides", a, b),
			aInts("output_padding", c, d), aInt("group", a))}}
	},
}

func ints(name string, v ...int64) part { return part{graphInitializer, int64Tensor(name, nil, v...)} }

func scalarInit(name string, v int64) part {
	return part{graphInitializer, int64Tensor(name, []int64{}, v)}
}

func opNode(op string, in []string) part { return part{graphNode, nodeMsg("n", op, in, []string{"y"})} }

// FuzzOpParams: any parameters of the shape operators give a graph that
// plans and passes CheckPlan, or an error; never a panic.
func FuzzOpParams(f *testing.F) {
	for k := range opCases {
		f.Add(uint8(k), int64(1), int64(2), int64(1), int64(1))
		f.Add(uint8(k), int64(-1), int64(1<<62), int64(-1<<63), int64(0))
		f.Add(uint8(k), int64(0), int64(1), int64(2), int64(3))
	}
	f.Fuzz(func(t *testing.T, k uint8, a, b, c, d int64) {
		parts := append([]part{{graphInput, valueInfo("x", 1, 2, 3, 4, 4)}}, opCases[int(k)%len(opCases)](a, b, c, d)...)
		parts = append(parts, part{graphOutput, valueInfo("y", 0)})
		data := opsetModel(13, parts...)
		g, err := Read(data, "op", Options{})
		if err != nil {
			return
		}
		r, err := memgraph.Plan(g, memgraph.Options{})
		if err != nil {
			t.Fatalf("Read gave a graph that does not plan: %v", err)
		}
		if err := CheckPlan(data, placements(g, r)); err != nil {
			t.Fatal(err)
		}
	})
}
