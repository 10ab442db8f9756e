package tflite

import (
	"slices"
	"strings"
	"testing"
)

// smallModel: input t0 (1x4x4x2 float32) → op0 (conv with constant
// weights t1) → t2 (1x4x4x8 float32) → op1 (custom) → t3 (int8, 16
// elements), the output. Buffer 1 holds t1's data.
func smallModel() tbl {
	tensor := func(shape []int32, typ uint8, buffer int32, name string) tbl {
		return tbl{shape, typ, buffer, name}
	}
	sub := tbl{
		[]tbl{
			tensor([]int32{1, 4, 4, 2}, 0, 0, "in"),
			tensor([]int32{8, 1, 1, 2}, 0, 1, "w"),
			tensor([]int32{1, 4, 4, 8}, 0, 2, "mid"),
			tensor([]int32{16}, 9, 0, "out"),
		},
		[]int32{0},
		[]int32{3},
		[]tbl{
			{int32(0), []int32{0, 1, -1}, []int32{2}},
			{int32(1), []int32{2, 2}, []int32{3}},
		},
	}
	return tbl{
		int32(3),
		[]tbl{{uint8(3), nil, int32(1), int32(3)}, {uint8(32), "MyOp"}},
		[]tbl{sub},
		nil,
		[]tbl{{}, {[]byte{1, 2, 3, 4}}, {}},
	}
}

func TestReadSmall(t *testing.T) {
	g, err := Read(encodeModel(smallModel()), "small")
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Ops) != 2 || g.Ops[0].Kind != "builtin:3" || g.Ops[1].Kind != "custom:MyOp" {
		t.Fatalf("ops %+v", g.Ops)
	}
	var ids []string
	for _, x := range g.Tensors {
		ids = append(ids, x.ID)
	}
	if !slices.Equal(ids, []string{"t0", "t2", "t3"}) {
		t.Fatalf("tensors %v: want the constant t1 left out", ids)
	}
	in, mid, out := g.Tensors[0], g.Tensors[1], g.Tensors[2]
	if in.Bytes != 128 || !in.Input || !slices.Equal(in.Consumers, []string{"op0"}) {
		t.Errorf("input %+v", in)
	}
	if mid.Bytes != 512 || mid.Producer != "op0" || !slices.Equal(mid.Consumers, []string{"op1"}) {
		t.Errorf("mid %+v (an op reading a tensor twice consumes it once)", mid)
	}
	if out.Bytes != 16 || out.Producer != "op1" || !out.Output {
		t.Errorf("output %+v", out)
	}
}

func TestReadErrors(t *testing.T) {
	good := encodeModel(smallModel())
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "no TFL3 identifier"},
		{"truncated", good[:len(good)/2], "past the end"},
		{"no subgraphs", encodeModel(tbl{int32(3), nil, []tbl{}}), "no subgraphs"},
	}
	bad := smallModel()
	bad[2].([]tbl)[0][0].([]tbl)[2][0] = []int32{1, -1, 8}
	cases = append(cases, struct {
		name string
		data []byte
		want string
	}{"dynamic", encodeModel(bad), "tensor 2 (mid): dynamic dimension"})
	bad = smallModel()
	bad[2].([]tbl)[0][3].([]tbl)[1][1] = []int32{9}
	cases = append(cases, struct {
		name string
		data []byte
		want string
	}{"index", encodeModel(bad), "operator 1: tensor index 9 out of range"})
	bad = smallModel()
	bad[1].([]tbl)[1] = tbl{uint8(119), nil, int32(1), int32(119)} // op1 becomes WHILE
	cases = append(cases, struct {
		name string
		data []byte
		want string
	}{"control flow", encodeModel(bad), "operator 1: builtin:119 (WHILE) runs another subgraph: not supported"})
	for _, c := range cases {
		_, err := Read(c.data, "m")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "tflite m: ") {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// FuzzRead: no input makes Read panic, and whatever it accepts is a
// valid memgraph graph.
func FuzzRead(f *testing.F) {
	f.Add(encodeModel(smallModel()))
	f.Add([]byte("\x08\x00\x00\x00TFL3"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Read(data, "fuzz")
		if err == nil {
			if err := g.Validate(); err != nil {
				t.Fatalf("Read accepted an invalid graph: %v", err)
			}
		}
	})
}
