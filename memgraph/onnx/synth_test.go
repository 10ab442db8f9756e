package onnx

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/quasim/quasim/memgraph"
)

// Synthetic models (built here, labelled synthetic): control flow and
// every shape operator, with sizes worked out by hand.

// ifModel (synthetic): x [1,256] float is read only inside the If's
// branches; y, the If's output, is made after Not's output dies.
//
//	c2 = Not(cond); y = If(c2){then: t1 = Relu(x); yt = Add(t1, x)}{else: ye = Neg(x)}; z = Relu(y)
func ifModel() []byte {
	then := graphBody(
		part{graphNode, nodeMsg("relu_t", "Relu", []string{"x"}, []string{"t1"})},
		part{graphNode, nodeMsg("add_t", "Add", []string{"t1", "x"}, []string{"yt"})},
		part{graphOutput, valueInfo("yt", 1, 1, 256)},
	)
	els := graphBody(
		part{graphNode, nodeMsg("neg_e", "Neg", []string{"x"}, []string{"ye"})},
		part{graphOutput, valueInfo("ye", 1, 1, 256)},
	)
	return opsetModel(13,
		part{graphInput, valueInfo("x", 1, 1, 256)},
		part{graphInput, scalarInfo("cond", tBool)},
		part{graphNode, nodeMsg("not", "Not", []string{"cond"}, []string{"c2"})},
		part{graphNode, nodeA("if", "If", []string{"c2"}, []string{"y"}, aGraph("then_branch", then), aGraph("else_branch", els))},
		part{graphNode, nodeMsg("relu", "Relu", []string{"y"}, []string{"z"})},
		part{graphOutput, valueInfo("z", 1, 1, 256)},
	)
}

func tensorByID(g *memgraph.Graph, id string) (memgraph.Tensor, int) {
	for i, t := range g.Tensors {
		if t.ID == id {
			return t, i
		}
	}
	return memgraph.Tensor{}, -1
}

// TestIfOuterScopeLives: a tensor the branches read lives until the If
// ends, so no plan puts the If's output in its bytes; CheckPlan refuses
// the aliasing plan the reader used to allow.
func TestIfOuterScopeLives(t *testing.T) {
	data := ifModel()
	g, subs, err := ReadDetail(data, "if", Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := tensorByID(g, "x")
	if !slices.Contains(x.Consumers, "if") {
		t.Fatalf("x consumers %v: want the If, whose branches read it", x.Consumers)
	}
	// then: t1 and yt alive together at add_t (x is the outer scope's):
	// 2 KiB; else: ye, 1 KiB. The node reserves the larger.
	arena, _ := tensorByID(g, "if"+SubgraphSuffix)
	if arena.Bytes != 2048 || arena.Producer != "if" || len(subs) != 2 {
		t.Fatalf("subgraph arena %+v, subgraphs %+v: want 2048 bytes made by the If, 2 subgraphs", arena, subs)
	}
	r, err := memgraph.Plan(g, memgraph.Options{Rand: rand.New(rand.NewPCG(1, 0))})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPlan(data, placements(g, r)); err != nil {
		t.Fatal(err)
	}
	// The old reader's plan: x dead after the first op, y in its bytes.
	bad := placements(g, r)
	var xo int64
	for _, p := range bad {
		if p.Tensor == "x" {
			xo = p.Offset
		}
	}
	for i := range bad {
		if bad[i].Tensor == "y" {
			bad[i].Offset = xo
		}
	}
	err = CheckPlan(data, bad)
	if err == nil || !strings.Contains(err.Error(), `"x"`) || !strings.Contains(err.Error(), `"y"`) {
		t.Fatalf("CheckPlan of y in x's bytes = %v, want an error naming x and y", err)
	}
}

// shapeOpsModel (synthetic) runs each shape operator of the folding and
// inference on x [batch,3,8,8] float, and a Loop whose body reads x.
func shapeOpsModel() []byte {
	body := graphBody(
		part{graphInput, valueInfo("it", tInt64)},
		part{graphInput, valueInfo("cin", tBool)},
		part{graphNode, nodeMsg("bid", "Identity", []string{"cin"}, []string{"cout"})},
		part{graphNode, nodeMsg("badd", "Add", []string{"x", "x"}, []string{"scan"})},
		part{graphOutput, valueInfo("cout", tBool)},
		part{graphOutput, valueInfo("scan", 1)},
	)
	n := func(name, op string, in []string, out string, attrs ...[]byte) part {
		return part{graphNode, nodeA(name, op, in, []string{out}, attrs...)}
	}
	init := func(name string, vals ...int64) part { return part{graphInitializer, int64Tensor(name, nil, vals...)} }
	return opsetModel(13,
		part{graphInput, valueInfo("x", 1, "batch", 3, 8, 8)},
		init("i0", 0), init("m1", -1), init("four", 4), init("two", 2), init("ax1", 1),
		init("st", 0), init("en", 100), init("parts", 30, 70), init("pads", 0, 0, 1, 1, 0, 0, 1, 1),
		init("one", 1), init("big", 65537), init("trips", 3),
		part{graphInitializer, func() []byte { // scales [1,1,2,2] as floats
			b := varint(varint(nil, initDims, 4), initDataType, tFloat)
			for _, f := range []float32{1, 1, 2, 2} {
				b = field(b, initFloatData, le32(f))
			}
			return field(b, initName, []byte("scales"))
		}()},
		part{graphInitializer, func() []byte { // cond true
			b := varint(varint(nil, initDataType, tBool), initInt32Data, 1)
			return field(b, initName, []byte("yes"))
		}()},
		n("shape", "Shape", []string{"x"}, "s"),
		n("gather", "Gather", []string{"s", "i0"}, "g"),
		n("concat", "Concat", []string{"g", "m1"}, "c", aInt("axis", 0)),
		n("reshape", "Reshape", []string{"x", "c"}, "r"),
		n("unsq", "Unsqueeze", []string{"r", "ax1"}, "u"),
		n("sq", "Squeeze", []string{"u", "ax1"}, "q"),
		n("slice", "Slice", []string{"q", "st", "en", "ax1"}, "sl"),
		part{graphNode, nodeA("split", "Split", []string{"sl", "parts"}, []string{"sp1", "sp2"}, aInt("axis", 1))},
		n("pad", "Pad", []string{"x", "pads"}, "p"),
		n("cshape", "Concat", []string{"one", "big"}, "cs", aInt("axis", 0)),
		n("cos", "ConstantOfShape", []string{"cs"}, "filled"),
		n("resize", "Resize", []string{"x", "", "scales"}, "rs"),
		n("transpose", "Transpose", []string{"x"}, "tr", aInts("perm", 0, 2, 3, 1)),
		n("cast", "Cast", []string{"tr"}, "half", aInt("to", tFloat16)),
		n("mul", "Mul", []string{"g", "four"}, "g4"),
		n("div", "Div", []string{"g4", "two"}, "g2"),
		n("concat2", "Concat", []string{"g2", "m1"}, "c2", aInt("axis", 0)),
		n("reshape2", "Reshape", []string{"x", "c2"}, "r2"),
		n("loop", "Loop", []string{"trips", "yes"}, "stacked", aGraph("body", body)),
		part{graphOutput, valueInfo("sp1", 1)}, part{graphOutput, valueInfo("sp2", 1)},
		part{graphOutput, valueInfo("p", 1)}, part{graphOutput, valueInfo("filled", 1)},
		part{graphOutput, valueInfo("rs", 1)}, part{graphOutput, valueInfo("half", tFloat16)},
		part{graphOutput, valueInfo("r2", 1)}, part{graphOutput, valueInfo("stacked", 1)},
	)
}

func le32(f float32) []byte {
	b := protowireFixed32(f)
	return b
}

func TestShapeOperators(t *testing.T) {
	data := shapeOpsModel()
	g, subs, err := ReadDetail(data, "shapes", Options{Dims: map[string]int64{"batch": 2}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"x":                     2 * 3 * 8 * 8 * 4,
		"r":                     2 * 192 * 4, // Reshape(x, Concat(Gather(Shape(x), 0), -1)): [2,192]
		"u":                     2 * 192 * 4, // [2,1,192]
		"q":                     2 * 192 * 4,
		"sl":                    2 * 100 * 4, // Slice axis 1 [0:100]
		"sp1":                   2 * 30 * 4,
		"sp2":                   2 * 70 * 4,
		"p":                     2 * 3 * 10 * 10 * 4, // Pad 1 each side of H and W
		"filled":                65537 * 4,           // ConstantOfShape [1,65537]: too big to fold, planned
		"rs":                    2 * 3 * 16 * 16 * 4, // Resize by scales [1,1,2,2]
		"tr":                    2 * 8 * 8 * 3 * 4,
		"half":                  2 * 8 * 8 * 3 * 2, // Cast to float16
		"r2":                    384 * 4,           // Reshape(x, [2*4/2, -1]) = [4,96]
		"stacked":               3 * 384 * 4,       // Loop scan output: 3 trips of [2,3,8,8]
		"loop" + SubgraphSuffix: 0,                 // set below
	}
	// Folded into constants: not ops, not planned.
	for _, name := range []string{"s", "g", "c", "g4", "g2", "c2", "cs"} {
		if _, i := tensorByID(g, name); i >= 0 {
			t.Errorf("tensor %q planned: want it folded into a constant", name)
		}
	}
	// The Loop body: scan (1536 bytes) and cout (1 byte), as planned.
	if len(subs) != 1 || subs[0].Peak < 1536 {
		t.Fatalf("subgraphs %+v: want the Loop body, peak >= 1536", subs)
	}
	want["loop"+SubgraphSuffix] = subs[0].Peak
	for name, b := range want {
		tn, i := tensorByID(g, name)
		if i < 0 || tn.Bytes != b {
			t.Errorf("tensor %q: %d bytes (found %v), want %d", name, tn.Bytes, i >= 0, b)
		}
	}
	if len(g.Tensors) != len(want) {
		ids := []string{}
		for _, tn := range g.Tensors {
			ids = append(ids, tn.ID)
		}
		t.Errorf("tensors %v: want exactly %d", ids, len(want))
	}
	x, _ := tensorByID(g, "x")
	if x.Consumers[len(x.Consumers)-1] != "loop" {
		t.Errorf("x consumers %v: want the Loop last (its body reads x)", x.Consumers)
	}
	r, err := memgraph.Plan(g, memgraph.Options{Rand: rand.New(rand.NewPCG(1, 0))})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPlan(data, placements(g, r)); err != nil {
		t.Fatal(err)
	}
}

// TestLoopNoTripCount: a Loop whose trip count is not known stacks an
// unknown number of scan outputs: refused unless Unknown stands in.
func TestLoopNoTripCount(t *testing.T) {
	body := graphBody(
		part{graphInput, valueInfo("it", tInt64)},
		part{graphInput, valueInfo("cin", tBool)},
		part{graphNode, nodeMsg("bid", "Identity", []string{"cin"}, []string{"cout"})},
		part{graphNode, nodeMsg("bneg", "Neg", []string{"x"}, []string{"scan"})},
		part{graphOutput, valueInfo("cout", tBool)},
		part{graphOutput, valueInfo("scan", 1)},
	)
	data := opsetModel(13,
		part{graphInput, valueInfo("x", 1, 4)},
		part{graphInput, scalarInfo("n", tInt64)},
		part{graphNode, nodeA("loop", "Loop", []string{"n", ""}, []string{"out"}, aGraph("body", body))},
		part{graphOutput, valueInfo("out", 1)},
	)
	if _, err := Read(data, "loop", Options{}); err == nil || !strings.Contains(err.Error(), `tensor "out": dim 0 depends on the data (Loop`) {
		t.Fatalf("Read = %v, want the Loop's output refused", err)
	}
	g, err := Read(data, "loop", Options{Unknown: 5})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := tensorByID(g, "out"); out.Bytes != 5*4*4 {
		t.Fatalf("out %+v: want 5 trips of 4 floats", out)
	}
}

// TestScanRefused: Scan's body is not planned; the reader says so.
func TestScanRefused(t *testing.T) {
	body := graphBody(
		part{graphInput, valueInfo("e", 1, 4)},
		part{graphNode, nodeMsg("bneg", "Neg", []string{"e"}, []string{"o"})},
		part{graphOutput, valueInfo("o", 1, 4)},
	)
	data := opsetModel(13,
		part{graphInput, valueInfo("x", 1, 3, 4)},
		part{graphNode, nodeA("scan", "Scan", []string{"x"}, []string{"y"}, aGraph("body", body), aInt("num_scan_inputs", 1))},
		part{graphOutput, valueInfo("y", 1, 3, 4)},
		part{graphValueInfo, valueInfo("y", 1, 3, 4)},
	)
	if _, err := Read(data, "scan", Options{}); err == nil || !strings.Contains(err.Error(), "Scan: not supported") {
		t.Fatalf("Read = %v, want Scan refused by name", err)
	}
}

// TestCheckPlanRefuses: names the model does not write, bad offsets and
// a subgraph arena over an output of the If it belongs to.
func TestCheckPlanRefuses(t *testing.T) {
	data := ifModel()
	g, err := Read(data, "if", Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := memgraph.Plan(g, memgraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	good := placements(g, r)
	at := func(name string) int {
		for i, p := range good {
			if p.Tensor == name {
				return i
			}
		}
		t.Fatalf("no placement of %q", name)
		return -1
	}
	cases := []struct {
		name string
		edit func(p []Placement) []Placement
		want string
	}{
		{"unknown tensor", func(p []Placement) []Placement { return append(p, Placement{Tensor: "ghost", Bytes: 4}) },
			`tensor "ghost": the model's main graph does not write it`},
		{"negative offset", func(p []Placement) []Placement { p[0].Offset = -64; return p }, "offset -64"},
		{"arena over the If's output", func(p []Placement) []Placement {
			p[at("if"+SubgraphSuffix)].Offset = p[at("y")].Offset
			return p
		}, `"if#subgraphs"`},
		{"branch read of x ignored", func(p []Placement) []Placement {
			p[at("c2")].Offset = p[at("x")].Offset // c2 and x are both read by the If
			return p
		}, `"x"`},
	}
	for _, c := range cases {
		err := CheckPlan(data, c.edit(slices.Clone(good)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: CheckPlan = %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestAdversarialParameters: parameters no exporter writes (a float
// delta for an integer Range, steps of ±2^63, a blocksize that overflows
// when squared, a float trip count) give a graph or an error, never a
// panic, and a graph they give plans and checks.
func TestAdversarialParameters(t *testing.T) {
	floatInit := func(name string, v float32) part {
		b := varint(nil, initDataType, tFloat)
		return part{graphInitializer, field(field(b, initFloatData, le32(v)), initName, []byte(name))}
	}
	scalar := func(name string, v int64) part { return part{graphInitializer, int64Tensor(name, []int64{}, v)} }
	x := part{graphInput, valueInfo("x", 1, 2, 8, 4, 4)}
	models := map[string][]byte{
		"range": opsetModel(13, x, scalar("s", 0), scalar("l", 5), floatInit("d", 0.5),
			part{graphNode, nodeMsg("r", "Range", []string{"s", "l", "d"}, []string{"y"})},
			part{graphOutput, valueInfo("y", tInt64)}),
		"slice": opsetModel(13, x, part{graphInitializer, int64Tensor("st", nil, 7)}, part{graphInitializer, int64Tensor("en", nil, -1<<63)},
			part{graphInitializer, int64Tensor("ax", nil, 1)}, part{graphInitializer, int64Tensor("sp", nil, -1<<63)},
			part{graphNode, nodeMsg("s", "Slice", []string{"x", "st", "en", "ax", "sp"}, []string{"y"})},
			part{graphOutput, valueInfo("y", 1)}),
		"depth": opsetModel(13, x,
			part{graphNode, nodeA("d", "DepthToSpace", []string{"x"}, []string{"y"}, aInt("blocksize", 1<<32))},
			part{graphOutput, valueInfo("y", 1)}),
		"loop": opsetModel(13, x, floatInit("m", 2.5),
			part{graphNode, nodeA("l", "Loop", []string{"m", ""}, []string{"y"}, aGraph("body", graphBody(
				part{graphInput, scalarInfo("i", tInt64)}, part{graphInput, scalarInfo("c", tBool)},
				part{graphNode, nodeMsg("id", "Identity", []string{"c"}, []string{"co"})},
				part{graphNode, nodeMsg("n", "Neg", []string{"x"}, []string{"o"})},
				part{graphOutput, valueInfo("co", tBool)}, part{graphOutput, valueInfo("o", 1)})))},
			part{graphOutput, valueInfo("y", 1)}),
	}
	for name, data := range models {
		g, err := Read(data, name, Options{})
		if err != nil {
			continue
		}
		r, err := memgraph.Plan(g, memgraph.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := CheckPlan(data, placements(g, r)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "slice" {
			if y, _ := tensorByID(g, "y"); y.Bytes != 2*1*4*4*4 {
				t.Errorf("slice by -2^63 from 7: %+v, want one row of axis 1", y)
			}
		}
	}
}

// TestShadowRefused: a branch that writes a name of the outer scope
// (which ONNX forbids) is refused: the outer tensor's lifetime would be
// ambiguous.
func TestShadowRefused(t *testing.T) {
	br := graphBody(
		part{graphNode, nodeMsg("relu_t", "Relu", []string{"x"}, []string{"c2"})},
		part{graphOutput, valueInfo("c2", 1, 1, 256)},
	)
	data := opsetModel(13,
		part{graphInput, valueInfo("x", 1, 1, 256)},
		part{graphInput, scalarInfo("cond", tBool)},
		part{graphNode, nodeMsg("not", "Not", []string{"cond"}, []string{"c2"})},
		part{graphNode, nodeA("if", "If", []string{"c2"}, []string{"y"}, aGraph("then_branch", br), aGraph("else_branch", br))},
		part{graphOutput, valueInfo("y", 1, 1, 256)},
	)
	_, err := Read(data, "shadow", Options{})
	if err == nil || !strings.Contains(err.Error(), `name "c2" is already defined in an outer scope`) {
		t.Fatalf("Read = %v, want the shadowing name refused", err)
	}
}

// TestReshapeUndetermined: a -1 beside dims with no elements fits any
// size, so the reshape is refused, as numpy refuses it; a -1 beside dims
// with elements is still found.
func TestReshapeUndetermined(t *testing.T) {
	if _, err := reshapeDims([]int64{0, 3}, []int64{0, -1}, false); err == nil || !strings.Contains(err.Error(), "undetermined") {
		t.Errorf("reshape [0,3] to [0,-1] = %v, want undetermined", err)
	}
	if out, err := reshapeDims([]int64{0, 3}, []int64{-1, 3}, false); err != nil || !slices.Equal(out, []int64{0, 3}) {
		t.Errorf("reshape [0,3] to [-1,3] = %v, %v; want [0 3]", out, err)
	}
}

// srModel (synthetic) is silero VAD's shape in small: an If on the
// sample rate whose 16 kHz branch sizes its output from x [1,n] and whose
// 8 kHz branch gives it no shape (an operator of another domain, as the
// 8 kHz LSTM is at a size it was not traced for).
//
//	c = Equal(sr, 16000); y = If(c){then: yt = Relu(x)}{else: ye = example.com:Cell(x)}; z = Relu(y)
func srModel() []byte {
	then := graphBody(
		part{graphNode, nodeMsg("relu_t", "Relu", []string{"x"}, []string{"yt"})},
		part{graphOutput, valueInfo("yt", 1)},
	)
	cell := nodeMsg("cell_e", "Cell", []string{"x"}, []string{"ye"})
	cell = field(cell, nodeDomain, []byte("example.com"))
	els := graphBody(
		part{graphNode, cell},
		part{graphOutput, valueInfo("ye", 1)},
	)
	return opsetModel(13,
		part{graphInput, valueInfo("x", 1, 1, "n")},
		part{graphInput, scalarInfo("sr", tInt64)},
		part{graphInitializer, int64Tensor("k16000", []int64{}, 16000)},
		part{graphNode, nodeMsg("eq", "Equal", []string{"sr", "k16000"}, []string{"c"})},
		part{graphNode, nodeA("if", "If", []string{"c"}, []string{"y"}, aGraph("then_branch", then), aGraph("else_branch", els))},
		part{graphNode, nodeMsg("relu", "Relu", []string{"y"}, []string{"z"})},
		part{graphOutput, valueInfo("z", 1, 1, "n")},
	)
}

// TestIfInputValue: a value given to the input an If's condition follows
// from makes the If take one branch, and only that branch is planned;
// without one, or with the value that takes the unsized branch, the read
// is refused naming the tensor (and, without one, the input to give).
func TestIfInputValue(t *testing.T) {
	data := srModel()
	dims := map[string]int64{"n": 512}
	g, subs, err := ReadDetail(data, "sr", Options{Dims: dims, Values: map[string][]int64{"sr": {16000}}})
	if err != nil {
		t.Fatalf("ReadDetail(sr=16000) = %v, want a graph", err)
	}
	// then: yt [1,512] float; the 8 kHz branch is not planned.
	if len(subs) != 1 || subs[0].Peak != 2048 || !strings.Contains(subs[0].Where, "attribute[0]") {
		t.Fatalf("subgraphs %+v: want the then branch only, peak 2048", subs)
	}
	if y, _ := tensorByID(g, "y"); y.Bytes != 2048 {
		t.Fatalf("y = %+v, want 2048 bytes", y)
	}
	if _, i := tensorByID(g, "c"); i >= 0 {
		t.Fatalf("c is planned: Equal on the given sr folds to a constant")
	}
	if sr, i := tensorByID(g, "sr"); i < 0 || sr.Bytes != 8 || !sr.Input {
		t.Fatalf("sr = %+v: the input is still passed and planned, 8 bytes", sr)
	}
	r, err := memgraph.Plan(g, memgraph.Options{Rand: rand.New(rand.NewPCG(1, 0))})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPlan(data, placements(g, r)); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		values map[string][]int64
		want   []string
	}{
		{"no value", nil, []string{`"ye"`, "graph input sr", "--value"}},
		{"8 kHz", map[string][]int64{"sr": {8000}}, []string{`"ye"`, "does not cover Cell"}},
		{"not an input", map[string][]int64{"rate": {16000}}, []string{`"rate"`, "not a graph input"}},
		{"a weight", map[string][]int64{"k16000": {1}}, []string{`"k16000"`, "initializer"}},
		{"float input", map[string][]int64{"x": make([]int64, 512)}, []string{`"x"`, "integer or bool"}},
		{"two for a scalar", map[string][]int64{"sr": {16000, 8000}}, []string{`"sr"`, "2 elements"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(data, "sr", Options{Dims: dims, Values: tt.values})
			if err == nil {
				t.Fatalf("Read(%v) = nil error, want one naming %q", tt.values, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Read(%v) = %v, want it to name %s", tt.values, err, w)
				}
			}
		})
	}
}
