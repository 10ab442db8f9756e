package onnx

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/quasim/quasim/memgraph"
)

// A generator of synthetic models for the fuzz and property tests: a
// byte stream picks an input shape, then ops and their parameters. Where
// the generator knows an output's shape by construction (its own, simple
// reckoning, independent of ops.go), it records the bytes expected.

type gen struct {
	src   []byte
	parts []part
	known map[string][]int64 // tensor → shape, by construction
	names []string
	n     int
}

func (g *gen) next() int {
	if len(g.src) == 0 {
		return 0
	}
	b := g.src[0]
	g.src = g.src[1:]
	return int(b)
}

func (g *gen) fresh() string { g.n++; return fmt.Sprintf("t%d", g.n) }

func (g *gen) init(vals ...int64) string {
	name := g.fresh()
	g.parts = append(g.parts, part{graphInitializer, int64Tensor(name, nil, vals...)})
	return name
}

func (g *gen) node(op string, in []string, attrs ...[]byte) string {
	out := g.fresh()
	g.parts = append(g.parts, part{graphNode, nodeA(out, op, in, []string{out}, attrs...)})
	g.names = append(g.names, out)
	return out
}

// pick is a tensor made so far whose shape is known by construction.
func (g *gen) pick() (string, []int64) {
	var ks []string
	for _, n := range g.names {
		if _, ok := g.known[n]; ok {
			ks = append(ks, n)
		}
	}
	name := ks[g.next()%len(ks)]
	return name, g.known[name]
}

func genModel(src []byte) ([]byte, map[string][]int64) {
	g := &gen{src: src, known: map[string][]int64{}}
	rank := 1 + g.next()%4
	shape := make([]int64, rank)
	var dims []dimSpec
	for k := range shape {
		shape[k] = int64(1 + g.next()%6)
		dims = append(dims, int(shape[k]))
	}
	g.parts = append(g.parts, part{graphInput, valueInfo("x", 1, dims...)})
	g.names, g.known["x"] = []string{"x"}, shape
	for range g.next() % 12 {
		x, s := g.pick()
		r := int64(len(s))
		var out string
		var want []int64
		switch g.next() % 14 {
		case 0:
			out, want = g.node("Relu", []string{x}), s
		case 1:
			y, t := g.pick()
			w, err := broadcast(s, t)
			if err != nil {
				y, w = x, s // shapes that do not broadcast: Read's error is tested elsewhere
			}
			out, want = g.node("Add", []string{x, y}), w
		case 2: // Transpose by a rotation
			k := int64(g.next()) % r
			perm := make([]int64, r)
			want = make([]int64, r)
			for i := range perm {
				perm[i] = (int64(i) + k) % r
				want[i] = s[perm[i]]
			}
			out = g.node("Transpose", []string{x}, aInts("perm", perm...))
		case 3: // Reshape to [-1] or [d0, -1]
			if mulDims(s) == 0 {
				// No elements: a -1 could be anything (numpy refuses it).
				out, want = g.node("Relu", []string{x}), s
			} else if g.next()%2 == 0 || r == 1 {
				out, want = g.node("Reshape", []string{x, g.init(-1)}), []int64{mulDims(s)}
			} else {
				out, want = g.node("Reshape", []string{x, g.init(0, -1)}), []int64{s[0], mulDims(s[1:])}
			}
		case 4: // Concat with itself
			a := int64(g.next()) % r
			want = slices.Clone(s)
			want[a] *= 2
			out = g.node("Concat", []string{x, x}, aInt("axis", a-r*int64(g.next()%2)))
		case 5: // Unsqueeze then Squeeze the same axis
			a := int64(g.next()) % (r + 1)
			u := g.node("Unsqueeze", []string{x, g.init(a)})
			out, want = g.node("Squeeze", []string{u, g.init(a)}), s
		case 6: // Slice [b, e) of one axis, bounds possibly out of range
			a := int64(g.next()) % r
			b, e := int64(g.next()%9)-2, int64(g.next()%9)-2
			out = g.node("Slice", []string{x, g.init(b), g.init(e), g.init(a)})
			nb, ne := b, e
			if nb < 0 {
				nb += s[a]
			}
			if ne < 0 {
				ne += s[a]
			}
			nb, ne = min(max(nb, 0), s[a]), min(max(ne, 0), s[a])
			want = slices.Clone(s)
			want[a] = max(ne-nb, 0)
		case 7: // Split an axis in two
			a := int64(g.next()) % r
			p := int64(g.next()) % (s[a] + 1)
			o1, o2 := g.fresh(), g.fresh()
			g.parts = append(g.parts, part{graphNode, nodeA(o1, "Split", []string{x, g.init(p, s[a]-p)}, []string{o1, o2}, aInt("axis", a))})
			g.names = append(g.names, o1, o2)
			w1, w2 := slices.Clone(s), slices.Clone(s)
			w1[a], w2[a] = p, s[a]-p
			g.known[o1], g.known[o2] = w1, w2
			continue
		case 8: // Pad every axis by 0..2 each side
			pads := make([]int64, 2*r)
			want = slices.Clone(s)
			for i := range pads {
				pads[i] = int64(g.next() % 3)
				want[i%int(r)] += pads[i]
			}
			out = g.node("Pad", []string{x, g.init(pads...)})
		case 9: // ConstantOfShape(Shape(x)): folded when small, else planned
			out, want = g.node("ConstantOfShape", []string{g.node("Shape", []string{x})}), s
		case 10: // Reshape to the shape's own Gather/Concat: x's shape
			sh := g.node("Shape", []string{x})
			parts := []string{}
			for k := range r {
				parts = append(parts, g.node("Gather", []string{sh, g.init(k)}))
			}
			out, want = g.node("Reshape", []string{x, g.node("Concat", parts, aInt("axis", 0))}), s
		case 11: // Resize by 1 or 2 on the last axis
			f := float32(1 + g.next()%2)
			sc := g.fresh()
			b := varint(varint(nil, initDims, uint64(r)), initDataType, tFloat)
			for k := range r {
				v := float32(1)
				if k == r-1 {
					v = f
				}
				b = field(b, initFloatData, le32(v))
			}
			g.parts = append(g.parts, part{graphInitializer, field(b, initName, []byte(sc))})
			want = slices.Clone(s)
			want[r-1] *= int64(f)
			out = g.node("Resize", []string{x, "", sc})
		case 12: // If reading x from the outer scope in both branches
			c := g.node("Greater", []string{g.node("ReduceSum", []string{x}), x})
			out = g.fresh()
			br := func(op string) []byte {
				o := g.fresh()
				return graphBody(part{graphNode, nodeMsg(o, op, []string{x}, []string{o})}, part{graphOutput, valueInfo(o, 1)})
			}
			g.parts = append(g.parts, part{graphNode, nodeA(out, "If", []string{g.node("ReduceMin", []string{c})},
				[]string{out}, aGraph("then_branch", br("Relu")), aGraph("else_branch", br("Neg")))})
			g.names = append(g.names, out)
			want = s
		case 13: // Loop of 0..3 trips stacking Neg(x)
			trips := int64(g.next() % 4)
			o, ci, co := g.fresh(), g.fresh(), g.fresh()
			body := graphBody(part{graphInput, scalarInfo(g.fresh(), tInt64)}, part{graphInput, scalarInfo(ci, tBool)},
				part{graphNode, nodeMsg(co, "Identity", []string{ci}, []string{co})},
				part{graphNode, nodeMsg(o, "Neg", []string{x}, []string{o})},
				part{graphOutput, valueInfo(co, tBool)}, part{graphOutput, valueInfo(o, 1)})
			out = g.fresh()
			g.parts = append(g.parts, part{graphNode, nodeA(out, "Loop", []string{g.init(trips), ""}, []string{out}, aGraph("body", body))})
			g.names = append(g.names, out)
			want = append([]int64{trips}, s...)
		}
		if want != nil {
			g.known[out] = want
		}
	}
	last := g.names[len(g.names)-1]
	g.parts = append(g.parts, part{graphOutput, valueInfo(last, 1)})
	return opsetModel(13, g.parts...), g.known
}

// checkGenerated: a generated model reads, plans and passes CheckPlan,
// and every tensor whose shape the generator knows has its size.
func checkGenerated(t *testing.T, src []byte) {
	data, known := genModel(src)
	g, err := Read(data, "gen", Options{})
	if err != nil {
		t.Fatalf("Read of a generated model: %v", err)
	}
	for _, tn := range g.Tensors {
		if s, ok := known[tn.ID]; ok && tn.Bytes != mulDims(s)*4 {
			t.Fatalf("tensor %q: %d bytes, want %v floats", tn.ID, tn.Bytes, s)
		}
	}
	r, err := memgraph.Plan(g, memgraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPlan(data, placements(g, r)); err != nil {
		t.Fatal(err)
	}
}

// TestShapeInferenceProperties runs 500 generated models (seeded).
func TestShapeInferenceProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0))
	for range 500 {
		src := make([]byte, 64)
		for k := range src {
			src[k] = byte(rng.IntN(256))
		}
		checkGenerated(t, src)
	}
}

// FuzzShapeInference: generated models (valid by construction) size as
// the generator reckons and plan with a plan CheckPlan accepts; the same
// bytes read as a raw model give a graph that plans, or an error.
func FuzzShapeInference(f *testing.F) {
	f.Add([]byte{3, 2, 3, 4, 11, 0, 2, 1})
	f.Add([]byte{2, 5, 5, 6, 0, 12, 0, 13, 0, 3, 0, 10, 0, 9, 0, 7, 0, 2})
	f.Fuzz(func(t *testing.T, src []byte) {
		checkGenerated(t, src)
		data, _ := genModel(src)
		for cut := range min(len(data), 2) {
			// A damaged model: an error or a graph that plans and checks.
			bad := slices.Clone(data)
			bad[(len(src)*31+cut*977)%len(bad)] ^= byte(1 + cut)
			g, err := Read(bad, "bad", Options{Unknown: 2})
			if err != nil {
				continue
			}
			r, err := memgraph.Plan(g, memgraph.Options{})
			if err != nil {
				t.Fatalf("Read gave a graph that does not plan: %v", err)
			}
			if err := CheckPlan(bad, placements(g, r)); err != nil {
				t.Fatalf("plan of a damaged model fails CheckPlan: %v", err)
			}
		}
	})
}
