package memgraph

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeErrors(t *testing.T) {
	ops := `"ops":[{"id":"a"},{"id":"b"}]`
	cases := []struct{ name, body, want string }{
		{"unknown field", `{` + ops + `,"tensors":[],"colour":1}`, `unknown field "colour"`},
		{"trailing", `{` + ops + `,"tensors":[]} {}`, "trailing data"},
		{"not json", `{"ops":`, "json"},
		{"bad order", `{"order":"any",` + ops + `,"tensors":[]}`, `order "any"`},
		{"empty op id", `{"ops":[{"id":""}],"tensors":[]}`, "ops[0]: empty id"},
		{"dup op", `{"ops":[{"id":"a"},{"id":"a"}],"tensors":[]}`, `op "a": duplicate id`},
		{"dup tensor", `{` + ops + `,"tensors":[{"id":"x","bytes":1,"input":true},{"id":"x","bytes":1,"input":true}]}`, `tensor "x": duplicate id`},
		{"negative", `{` + ops + `,"tensors":[{"id":"x","bytes":-4,"input":true}]}`, `tensor "x": bytes -4`},
		{"absurd", `{` + ops + `,"tensors":[{"id":"x","bytes":1099511627777,"input":true}]}`, `tensor "x": bytes 1099511627777 outside`},
		{"no producer", `{` + ops + `,"tensors":[{"id":"x","bytes":4,"consumers":["a"]}]}`, `tensor "x": no producer`},
		{"unknown producer", `{` + ops + `,"tensors":[{"id":"x","bytes":4,"producer":"z"}]}`, `tensor "x": producer "z" is not an op`},
		{"unknown consumer", `{` + ops + `,"tensors":[{"id":"x","bytes":4,"producer":"a","consumers":["q"]}]}`, `tensor "x": consumer "q" is not an op`},
		{"self loop", `{` + ops + `,"tensors":[{"id":"x","bytes":4,"producer":"a","consumers":["a"]}]}`, `tensor "x": op "a" consumes its own output`},
		{"fixed order backwards", `{` + ops + `,"tensors":[{"id":"x","bytes":4,"producer":"b","consumers":["a"]}]}`, `tensor "x": consumer "a" (op 0) runs before producer "b"`},
		{"cycle", `{"order":"free",` + ops + `,"tensors":[{"id":"x","bytes":4,"producer":"a","consumers":["b"]},{"id":"y","bytes":4,"producer":"b","consumers":["a"]}]}`, "is on a cycle"},
		{"alignment", `{` + ops + `,"tensors":[{"id":"x","bytes":4,"input":true,"alignment":48}]}`, `tensor "x": alignment: 48 is not a power of two`},
		{"graph alignment", `{"alignment":-1,` + ops + `,"tensors":[]}`, "alignment: -1"},
		{"first alone", `{` + ops + `,"tensors":[{"id":"x","bytes":4,"first":0}]}`, `tensor "x": first and last go together`},
		{"first past end", `{` + ops + `,"tensors":[{"id":"x","bytes":4,"first":0,"last":2}]}`, `tensor "x": first 0, last 2`},
		{"first in free", `{"order":"free",` + ops + `,"tensors":[{"id":"x","bytes":4,"first":0,"last":1}]}`, `tensor "x": first/last need a fixed op order`},
		{"both", `{` + ops + `,"tensors":[{"id":"x","bytes":4,"first":0,"last":1,"producer":"a"}]}`, `tensor "x": give first/last or producer/consumers`},
		{"input with producer", `{` + ops + `,"tensors":[{"id":"x","bytes":4,"input":true,"producer":"a"}]}`, `tensor "x": a graph input or host tensor has no producer`},
		{"host unused", `{` + ops + `,"tensors":[{"id":"x","bytes":4,"host":true}]}`, `tensor "x": a host tensor needs a consumer`},
		{"huge body", `{"name":"` + strings.Repeat("x", MaxBody) + `"}`, "over the limit"},
	}
	for _, c := range cases {
		_, err := Decode([]byte(c.body))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an ErrInvalid containing %q", c.name, err, c.want)
		}
	}
}

func TestDecodeTotalLimit(t *testing.T) {
	g := &Graph{Ops: []Op{{ID: "a"}}}
	for i := range 1025 {
		g.Tensors = append(g.Tensors, Tensor{ID: "t" + string(rune('A'+i%26)) + strings.Repeat("x", i/26), Bytes: MaxTensorBytes, Input: true})
	}
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "total bytes over the limit") {
		t.Fatalf("got %v, want the total limit", err)
	}
}

func TestDecodeDocExample(t *testing.T) {
	body := `{"name":"example","ops":[{"id":"op0"},{"id":"op1"},{"id":"op2"}],"tensors":[
	 {"id":"t0","bytes":4096,"input":true,"consumers":["op0"]},
	 {"id":"t1","bytes":8192,"alignment":128,"producer":"op0","consumers":["op1","op2"],"output":true},
	 {"id":"w","bytes":512,"host":true,"consumers":["op2"]},
	 {"id":"s","bytes":64,"first":1,"last":2}]}`
	g, err := Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := compile(g)
	iv := c.intervals([]int32{0, 1, 2})
	want := []Interval{{0, 0}, {0, 2}, {2, 2}, {1, 2}}
	for i := range want {
		if iv[i] != want[i] {
			t.Errorf("tensor %s: interval %v, want %v", g.Tensors[i].ID, iv[i], want[i])
		}
	}
	if lb := LowerBound(c.size, iv); lb != 4096+8192 { // op0: t0 and t1
		t.Errorf("lower bound %d, want %d", lb, 4096+8192)
	}
}
