package onnx

import (
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
