package onnx

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/quasim/quasim/memgraph"
)

// FuzzReadONNX: any bytes give a graph that plans, or an error; never a
// panic or a graph memgraph refuses.
func FuzzReadONNX(f *testing.F) {
	f.Add(convNet())
	f.Add(modelMsg(part{graphInput, valueInfo("x", 1, "n", -1, 3)}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Read(data, "fuzz", Options{Unknown: 1})
		if err != nil {
			return
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("Read returned a graph that does not validate: %v", err)
		}
		if _, err := memgraph.Plan(g, memgraph.Options{}); err != nil {
			t.Fatalf("Read returned a graph that does not plan: %v", err)
		}
	})
}

// FuzzParseValue: any --value text is refused or reads back the same
// after formatting, and the synthetic If model read with it plans or is
// refused, never panics.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"sr=16000", "sr=8000", "x=1,2,3", "sr=", "=1", "sr=1,,2", "k16000=1", "sr=-9223372036854775808"} {
		f.Add(s)
	}
	model := srModel()
	f.Fuzz(func(t *testing.T, s string) {
		name, v, err := ParseValue(s)
		if err != nil {
			return
		}
		if name == "" || len(v) == 0 {
			t.Fatalf("ParseValue(%q) = %q, %v: want a name and at least one element", s, name, v)
		}
		parts := make([]string, len(v))
		for k, x := range v {
			parts[k] = strconv.FormatInt(x, 10)
		}
		name2, v2, err := ParseValue(name + "=" + strings.Join(parts, ","))
		if err != nil || name2 != name || !slices.Equal(v, v2) {
			t.Fatalf("ParseValue(%q) = %q, %v; formatted and read again: %q, %v, %v", s, name, v, name2, v2, err)
		}
		g, err := Read(model, "fuzz", Options{Dims: map[string]int64{"n": 4}, Values: map[string][]int64{name: v}})
		if err != nil {
			return
		}
		if _, err := memgraph.Plan(g, memgraph.Options{}); err != nil {
			t.Fatalf("Read with value %q returned a graph that does not plan: %v", s, err)
		}
	})
}
