package memgraph

import (
	"math/rand/v2"
	"testing"
)

// FuzzDecode: any body either fails with ErrInvalid or decodes to a graph
// whose plan passes the pairwise check.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"ops":[{"id":"a"},{"id":"b"}],"tensors":[{"id":"x","bytes":64,"input":true,"consumers":["a"]},{"id":"y","bytes":32,"producer":"a","consumers":["b"],"output":true}]}`))
	f.Add([]byte(`{"order":"free","alignment":16,"ops":[{"id":"a"},{"id":"b"},{"id":"c"}],"tensors":[{"id":"x","bytes":100,"producer":"a","consumers":["c"]},{"id":"y","bytes":7,"alignment":8,"producer":"b","consumers":["c"]},{"id":"h","bytes":9,"host":true,"consumers":["b"]}]}`))
	f.Add([]byte(`{"ops":[{"id":"a"},{"id":"b"}],"tensors":[{"id":"s","bytes":5,"first":0,"last":1},{"id":"u","bytes":3,"first":1,"last":1}]}`))
	f.Add([]byte(`{"ops":[{"id":"a"}],"tensors":[{"id":"x","bytes":-1,"input":true}]}`))
	f.Add([]byte(`{"ops":[{"id":"a","duration_ns":5,"access":[{"tensor":"x","pattern":"strided","stride":64},{"tensor":"y","pattern":"tiled","row":32,"tile":[2,4]},{"tensor":"y","pattern":"loops","elem":8,"loops":[[3,0],[4,8]]}]},{"id":"b","access":[{"tensor":"y","pattern":"sequential","passes":2,"offset":4}]}],"tensors":[{"id":"x","bytes":256,"input":true,"consumers":["a"]},{"id":"y","bytes":128,"producer":"a","consumers":["b"],"output":true},{"id":"w","bytes":96,"host":true,"consumers":["b"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Decode(data)
		if err != nil {
			return
		}
		if len(g.Tensors) > 300 || len(g.Ops) > 300 {
			return // large valid graphs are the benchmarks' business
		}
		r, err := Plan(g, Options{Rand: rand.New(rand.NewPCG(1, 1)), Iters: 20})
		if err != nil {
			t.Fatalf("valid graph, no plan: %v", err)
		}
		c, _ := compile(g)
		if !bruteCheck(c.size, c.align, r.Intervals, r.Offsets, r.Peak) || r.Peak < r.LowerBound {
			t.Fatalf("bad plan %+v", r)
		}
		fuzzLocality(t, g, r)
	})
}
