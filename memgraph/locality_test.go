package memgraph

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// naiveDistance is the LRU stack by definition: a list, most recent
// first; a line's distance is its position.
type naiveStack struct{ s []int64 }

func (n *naiveStack) ref(line int64) int64 {
	i := slices.Index(n.s, line)
	if i >= 0 {
		n.s = slices.Delete(n.s, i, i+1)
	}
	n.s = slices.Insert(n.s, 0, line)
	return int64(i)
}

func TestReuseAgreesWithNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, lines := range []int64{1, 5, 50, 5000} {
		r, n := newReuse(lines), &naiveStack{}
		if lines == 50 {
			r = &reuse{sparse: map[int64]int32{}} // the map path
			r.grow(16)                            // and many compactions
		}
		for k := range 30000 {
			line := rng.Int64N(lines)
			if k%7 == 0 && len(n.s) > 0 { // some locality
				line = n.s[min(len(n.s)-1, int(rng.Int64N(4)))]
			}
			if got, want := r.ref(line), n.ref(line); got != want {
				t.Fatalf("lines %d, ref %d (line %d): distance %d, want %d", lines, k, line, got, want)
			}
		}
	}
}

// naiveSets is a set-associative LRU cache by definition: per set, the
// time of each cached line's last use; the oldest goes.
type naiveSets struct {
	sets, ways int64
	now        int64
	last       []map[int64]int64
}

func newNaiveSets(l CacheLevel) *naiveSets {
	ways := int64(l.Assoc)
	if ways == 0 {
		ways = l.Size / l.Line
	}
	n := &naiveSets{sets: l.Size / l.Line / ways, ways: ways}
	for range n.sets {
		n.last = append(n.last, map[int64]int64{})
	}
	return n
}

func (n *naiveSets) ref(line int64) bool {
	n.now++
	set := n.last[line%n.sets]
	_, hit := set[line]
	if !hit && int64(len(set)) == n.ways {
		oldest := int64(-1)
		for l, t := range set {
			if oldest < 0 || t < set[oldest] {
				oldest = l
			}
		}
		delete(set, oldest)
	}
	set[line] = n.now
	return hit
}

// naiveMisses expands every op's nests element by element, interleaves
// the streams of an op by the same rule as the tracer (access i of a
// stream of n at i/n, ties in list order) and simulates each level by
// definition on the element-level trace.
func naiveMisses(t *testing.T, g *Graph, r *Result, cs CacheSpec) []int64 {
	c, err := compile(g)
	if err != nil {
		t.Fatal(err)
	}
	tr := &tracer{g: g, c: c, r: r}
	nops := len(g.Ops)
	ins, outs := make([][]int32, nops), make([][]int32, nops)
	for i := range c.size {
		if p := c.producer[i]; p >= 0 {
			outs[p] = append(outs[p], int32(i))
		}
		for k, q := range c.consumers[i] {
			if !slices.Contains(c.consumers[i][:k], q) {
				ins[q] = append(ins[q], int32(i))
			}
		}
	}
	idx := map[string]int32{}
	for i, x := range g.Tensors {
		idx[x.ID] = int32(i)
	}
	L := cs.Levels[0].Line
	var sims []*naiveSets
	for _, l := range cs.Levels {
		sims = append(sims, newNaiveSets(l))
	}
	misses := make([]int64, len(sims))
	type acc struct {
		key   float64
		s     int
		lines []int64
	}
	for _, op := range r.Order {
		nests, err := tr.opNests(op, ins, outs, idx)
		if err != nil {
			t.Fatal(err)
		}
		var all []acc
		for s, n := range nests {
			i := int64(0)
			var walk func(d int, a int64)
			walk = func(d int, a int64) {
				if d == len(n.loops) {
					var ls []int64
					for l := a / L; l <= (a+n.elem-1)/L; l++ {
						ls = append(ls, l)
					}
					all = append(all, acc{float64(i) / float64(n.count), s, ls})
					i++
					return
				}
				for j := range n.loops[d].count {
					walk(d+1, a+j*n.loops[d].stride)
				}
			}
			walk(0, r.Offsets[n.tensor]+n.offset)
		}
		slices.SortStableFunc(all, func(a, b acc) int {
			if a.key != b.key {
				if a.key < b.key {
					return -1
				}
				return 1
			}
			return a.s - b.s
		})
		for _, a := range all {
			for _, line := range a.lines {
				for i, sim := range sims {
					if sim.ref(line) {
						break
					}
					misses[i]++
				}
			}
		}
	}
	return misses
}

// randomAccess gives op k one access over a tensor it touches, with a
// random pattern, or none.
func randomAccess(rng *rand.Rand, g *Graph, c *compiled, k int32) *Access {
	var cand []int32
	for i := range c.size {
		if c.size[i] >= 8 && c.touches(int32(i), k) {
			cand = append(cand, int32(i))
		}
	}
	if len(cand) == 0 {
		return nil
	}
	ti := cand[rng.IntN(len(cand))]
	bytes := c.size[ti]
	a := &Access{Tensor: g.Tensors[ti].ID, Elem: int64(1) << rng.IntN(4)}
	switch rng.IntN(4) {
	case 0:
		a.Pattern, a.Passes = "sequential", 1+rng.Int64N(3)
	case 1:
		a.Pattern = "strided"
		a.Stride = a.Elem * (1 + rng.Int64N(max(1, bytes/a.Elem/2)))
	case 2:
		a.Pattern, a.Row = "tiled", a.Elem*4
		rows := bytes / a.Row
		if rows < 2 {
			return nil
		}
		a.Offset = bytes - (rows/2*2)*a.Row
		a.Tile = []int64{2, 2}
	default:
		a.Pattern = "loops"
		a.Offset = rng.Int64N(bytes / 2)
		a.Loops = [][]int64{{1 + rng.Int64N(3), 0}, {1 + (bytes-a.Offset-a.Elem)/7, 7}}
		a.Elem = 1
	}
	return a
}

// TestMissesSingleStreamExact: when each op walks one tensor, merging a
// run of accesses to one line loses nothing, so Misses must equal the
// element-level simulation exactly, on random graphs, plans, patterns
// and caches (set-associative, direct-mapped, fully associative).
func TestMissesSingleStreamExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	specs := []CacheSpec{
		{Levels: []CacheLevel{{Size: 256, Line: 16, Assoc: 2}, {Size: 1024, Line: 16, Assoc: 4}}},
		{Levels: []CacheLevel{{Size: 128, Line: 32, Assoc: 1}}},
		{Levels: []CacheLevel{{Size: 512, Line: 64, Assoc: 0}, {Size: 4096, Line: 64, Assoc: 0}}},
	}
	exact := 0
	for k := range 300 {
		g := randomGraph(rng, false)
		c, _ := compile(g)
		for op := range g.Ops {
			if a := randomAccess(rng, g, c, int32(op)); a != nil {
				g.Ops[op].Access = []Access{*a}
			}
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("graph %d: %v", k, err)
		}
		r, err := Plan(g, Options{})
		if err != nil {
			t.Fatal(err)
		}
		cs := specs[k%len(specs)]
		single := true // every op walks at most one tensor
		for op := range g.Ops {
			if len(g.Ops[op].Access) == 0 {
				n := 0
				for i := range c.size {
					if c.size[i] > 0 && c.first[i] < 0 && c.touches(int32(i), int32(op)) {
						n++
					}
				}
				single = single && n <= 1
			}
		}
		est, err := Misses(g, r, cs)
		if err != nil {
			t.Fatalf("graph %d: %v", k, err)
		}
		want := naiveMisses(t, g, r, cs)
		if single {
			exact++
		}
		for i := range want {
			if single && est.Levels[i].Misses != want[i] {
				t.Fatalf("graph %d level %d: %d misses, element-level %d", k, i, est.Levels[i].Misses, want[i])
			}
		}
		if est.Levels[0].Misses < est.Lines || est.Refs > est.Accesses*2 {
			t.Fatalf("graph %d: %+v", k, est)
		}
	}
	if exact < 100 {
		t.Fatalf("only %d of 300 graphs compared exactly", exact)
	}
}

func TestAccessErrors(t *testing.T) {
	head := `{"ops":[{"id":"a","access":[`
	tail := `]},{"id":"b"}],"tensors":[{"id":"x","bytes":4096,"input":true,"consumers":["a"]},{"id":"y","bytes":64,"input":true,"consumers":["b"]}]}`
	cases := []struct{ access, want string }{
		{`{"tensor":"z","pattern":"sequential"}`, `op "a": access[0] (tensor "z"): not a tensor`},
		{`{"tensor":"y","pattern":"sequential"}`, `neither produces nor consumes`},
		{`{"tensor":"x","pattern":"zigzag"}`, `pattern "zigzag"`},
		{`{"tensor":"x","pattern":"sequential","elem":-4}`, `elem -4 outside`},
		{`{"tensor":"x","pattern":"sequential","offset":4097}`, `offset 4097 outside`},
		{`{"tensor":"x","pattern":"sequential","offset":4094}`, `no whole element`},
		{`{"tensor":"x","pattern":"strided","stride":6}`, `stride 6: want a positive multiple`},
		{`{"tensor":"x","pattern":"strided","stride":8192}`, `stride 8192 over`},
		{`{"tensor":"x","pattern":"tiled","row":256,"tile":[3,4]}`, `tile [3 4] does not divide the 16 x 64`},
		{`{"tensor":"x","pattern":"tiled","row":256,"tile":[4]}`, `want [rows, elements]`},
		{`{"tensor":"x","pattern":"loops","loops":[[2,4096]]}`, `reaches byte 4100, past the tensor's 4096 bytes`},
		{`{"tensor":"x","pattern":"loops","loops":[[0,4]]}`, `loops[0] = [0 4]`},
		{`{"tensor":"x","pattern":"sequential","passes":-1}`, `passes -1 outside`},
		{`{"tensor":"x","pattern":"loops","loops":[[2,4,1]]}`, `loops[0] = [2 4 1]`},
		{`{"tensor":"x","pattern":"loops","loops":[[1099511627776,0],[2,0]]}`, `over 1099511627776 element accesses`},
		{`{"tensor":"x","pattern":"loops","passes":2,"loops":[[2,4]]}`, `passes: add an outer loop`},
		{`{"tensor":"x","pattern":"sequential","stride":4}`, `stride belongs to pattern "strided"`},
	}
	for _, c := range cases {
		_, err := Decode([]byte(head + c.access + tail))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an ErrInvalid containing %q", c.access, err, c.want)
		}
	}
	if _, err := Decode([]byte(`{"ops":[{"id":"a","duration_ns":-1}],"tensors":[]}`)); err == nil || !strings.Contains(err.Error(), `op "a": duration_ns -1`) {
		t.Errorf("negative duration: %v", err)
	}
}

func TestCacheSpecErrors(t *testing.T) {
	g := &Graph{Ops: []Op{{ID: "a"}}, Tensors: []Tensor{{ID: "x", Bytes: 64, Input: true, Consumers: []string{"a"}}}}
	r, err := Plan(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range []CacheSpec{
		{},
		{Levels: []CacheLevel{{Size: 1024, Line: 48, Assoc: 2}}},
		{Levels: []CacheLevel{{Size: 1000, Line: 64, Assoc: 2}}},
		{Levels: []CacheLevel{{Size: 1024, Line: 64, Assoc: 2}, {Size: 4096, Line: 128, Assoc: 2}}},
		{Levels: []CacheLevel{{Size: 1024, Line: 64, Assoc: -1}}},
	} {
		if _, err := Misses(g, r, cs); !errors.Is(err, ErrBadCache) {
			t.Errorf("%+v: got %v, want ErrBadCache", cs, err)
		}
	}
	tiny := CacheSpec{Levels: []CacheLevel{{Size: 1024, Line: 64, Assoc: 2}}, MaxRefs: 1}
	g.Tensors[0].Bytes = 4096
	if r, err = Plan(g, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Misses(g, r, tiny); !errors.Is(err, ErrTraceTooLong) {
		t.Errorf("got %v, want ErrTraceTooLong", err)
	}
}

// TestMissesHand: a 4 KiB tensor read twice in sequence, 64-byte lines:
// 64 cold misses; a fully associative 4 KiB cache then hits the second
// pass, a 2 KiB one misses it all (LRU), and every reference of the
// second pass has stack distance 63.
func TestMissesHand(t *testing.T) {
	g := &Graph{Ops: []Op{{ID: "a", Access: []Access{{Tensor: "x", Pattern: "sequential", Passes: 2}}}},
		Tensors: []Tensor{{ID: "x", Bytes: 4096, Input: true, Consumers: []string{"a"}}}}
	r, err := Plan(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	est, err := Misses(g, r, CacheSpec{Levels: []CacheLevel{{Size: 4096, Line: 64}, {Size: 2048, Line: 64}}})
	if err != nil {
		t.Fatal(err)
	}
	if est.Accesses != 2048 || est.Lines != 64 || est.Levels[0].Misses != 64 || est.Levels[0].FullyAssociative != 64 || est.Levels[1].FullyAssociative != 128 || est.Levels[1].Misses != 64 {
		t.Fatalf("%+v", est)
	}
	want := []DistanceBucket{{-1, 64}, {1, 0}, {3, 0}, {7, 0}, {15, 0}, {31, 0}, {63, 0}, {127, 64}}
	if !slices.Equal(est.Distances, want) {
		t.Fatalf("distances %v, want %v", est.Distances, want)
	}
}

// fuzzLocality: every graph that decodes gets a miss estimate (or the
// trace-length error), whatever its access patterns, and a prefetch
// schedule (checked inside Prefetch) without a cap.
func fuzzLocality(t *testing.T, g *Graph, r *Result) {
	if _, err := Prefetch(g, r, PrefetchOptions{Bandwidth: 1 << 30, LatencyNS: 10}); err != nil {
		t.Fatalf("prefetch: %v", err)
	}
	cs := CacheSpec{Levels: []CacheLevel{{Size: 512, Line: 64, Assoc: 2}, {Size: 2048, Line: 64}}, MaxRefs: 1 << 14}
	est, err := Misses(g, r, cs)
	if err != nil {
		if !errors.Is(err, ErrTraceTooLong) {
			t.Fatalf("misses: %v", err)
		}
		return
	}
	if est.Levels[0].Misses < est.Lines || est.Levels[0].Misses > est.Refs || est.Levels[1].Refs != est.Levels[0].Misses {
		t.Fatalf("inconsistent estimate %+v", est)
	}
}
