package memgraph

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func TestGreedyBySizeHand(t *testing.T) {
	// a:100 [0,1], b:60 [1,2], c:40 [2,3], d:50 [0,0]; by size a, b, d, c:
	// a at 0, b above a, d above a (b is not alive at 0), c in the gap
	// under b (a is dead by then). Peak 160 = a+b during op 1.
	size := []int64{100, 60, 40, 50}
	iv := []Interval{{0, 1}, {1, 2}, {2, 3}, {0, 0}}
	p := newProblem(size, []int64{1, 1, 1, 1}, iv)
	off, peak := newPlacer(p).run(sizeOrder(p))
	if want := []int64{0, 100, 0, 100}; !slices.Equal(off, want) || peak != 160 {
		t.Fatalf("offsets %v peak %d, want %v peak 160", off, peak, want)
	}
	if lb := LowerBound(size, iv); lb != 160 {
		t.Fatalf("lower bound %d, want 160", lb)
	}
	if got := breadthOrder(p); !slices.Equal(got, []int32{0, 1, 3, 2}) {
		t.Fatalf("breadth order %v, want [0 1 3 2]", got)
	}
}

func TestAlignmentHonoured(t *testing.T) {
	size := []int64{3, 5, 7}
	align := []int64{1, 64, 16}
	iv := []Interval{{0, 2}, {0, 2}, {0, 2}}
	p := newProblem(size, align, iv)
	off, peak := newPlacer(p).run(sizeOrder(p))
	if err := Check(size, align, iv, off, peak); err != nil {
		t.Fatal(err)
	}
	if off[1]%64 != 0 || off[2]%16 != 0 {
		t.Fatalf("offsets %v misaligned", off)
	}
}

// bruteCheck is the pairwise definition Check must agree with.
func bruteCheck(size, align []int64, iv []Interval, off []int64, peak int64) bool {
	for i := range size {
		if off[i] < 0 || off[i]%align[i] != 0 || off[i]+size[i] > peak {
			return false
		}
		for j := range i {
			if size[i] > 0 && size[j] > 0 && iv[i].overlaps(iv[j]) && off[i] < off[j]+size[j] && off[j] < off[i]+size[i] {
				return false
			}
		}
	}
	return true
}

// TestCheckAgreesWithPairs feeds Check random, mostly invalid, plans: it
// must accept exactly those the pairwise definition accepts.
func TestCheckAgreesWithPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	bad := 0
	for range 20000 {
		n := 1 + rng.IntN(8)
		size, align, iv, off := make([]int64, n), make([]int64, n), make([]Interval, n), make([]int64, n)
		var peak int64
		for i := range n {
			size[i] = int64(rng.IntN(5))
			align[i] = int64(1) << rng.IntN(3)
			f := int32(rng.IntN(5))
			iv[i] = Interval{f, f + int32(rng.IntN(3))}
			off[i] = int64(rng.IntN(12))
			peak = max(peak, off[i]+size[i])
		}
		peak -= int64(rng.IntN(2))
		want := bruteCheck(size, align, iv, off, peak)
		if got := Check(size, align, iv, off, peak) == nil; got != want {
			t.Fatalf("Check says valid=%v, pairs say %v: size %v align %v iv %v off %v peak %d", got, want, size, align, iv, off, peak)
		}
		if !want {
			bad++
		}
	}
	if bad < 5000 {
		t.Fatalf("only %d invalid plans generated; the test would not catch much", bad)
	}
}

// randomGraph builds a graph of n ops: fixed order with explicit or
// derived lifetimes, or a free-order DAG.
func randomGraph(rng *rand.Rand, free bool) *Graph {
	g := &Graph{Alignment: int64(1) << rng.IntN(7)}
	if free {
		g.Order = "free"
	}
	nops := 1 + rng.IntN(12)
	for k := range nops {
		g.Ops = append(g.Ops, Op{ID: "o" + strconv.Itoa(k)})
	}
	ntens := rng.IntN(24)
	for i := range ntens {
		t := Tensor{ID: "t" + strconv.Itoa(i), Bytes: int64(rng.IntN(1 << uint(1+rng.IntN(12))))}
		if rng.IntN(4) == 0 {
			t.Alignment = int64(1) << rng.IntN(9)
		}
		switch r := rng.IntN(10); {
		case r == 0 && !free:
			f := rng.IntN(nops)
			l := f + rng.IntN(nops-f)
			t.First, t.Last = &f, &l
		case r == 1:
			t.Input = true
		case r == 2:
			t.Host = true
		default:
			p := rng.IntN(nops)
			t.Producer = g.Ops[p].ID
			if p == nops-1 {
				t.Output = true
			}
		}
		if t.First == nil {
			lo := 0
			if t.Producer != "" {
				lo, _ = strconv.Atoi(t.Producer[1:])
				lo++
			}
			for k := lo; k < nops; k++ {
				if rng.IntN(3) == 0 {
					t.Consumers = append(t.Consumers, g.Ops[k].ID)
				}
			}
			if t.Host && len(t.Consumers) == 0 {
				t.Host, t.Input = false, true
			}
			t.Output = t.Output || rng.IntN(8) == 0
		}
		g.Tensors = append(g.Tensors, t)
	}
	return g
}

// TestRandomGraphsNeverBad plans 12,000 random graphs with the search on
// and checks each answer against the pairwise definition, the lower bound
// and the baselines.
func TestRandomGraphsNeverBad(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 12000
	if testing.Short() {
		n = 1000
	}
	for k := range n {
		g := randomGraph(rng, k%3 == 0)
		if err := g.Validate(); err != nil {
			t.Fatalf("graph %d invalid: %v", k, err)
		}
		r, err := Plan(g, Options{Rand: rng, Iters: 40})
		if err != nil {
			t.Fatalf("graph %d: %v", k, err)
		}
		c, _ := compile(g)
		if !slices.Equal(r.Intervals, c.intervals(r.Order)) {
			t.Fatalf("graph %d: intervals do not match the order", k)
		}
		checkTopo(t, c, r.Order)
		if !bruteCheck(c.size, c.align, r.Intervals, r.Offsets, r.Peak) {
			t.Fatalf("graph %d: overlapping or misaligned plan: %+v", k, r)
		}
		if r.Peak < r.LowerBound || r.Peak > min(r.BySize, r.ByBreadth) {
			t.Fatalf("graph %d: peak %d, bound %d, baselines %d %d", k, r.Peak, r.LowerBound, r.BySize, r.ByBreadth)
		}
	}
}

func checkTopo(t *testing.T, c *compiled, order []int32) {
	t.Helper()
	pos := make([]int, c.nops)
	seen := make([]bool, c.nops)
	for k, op := range order {
		if seen[op] {
			t.Fatalf("op %d twice in order %v", op, order)
		}
		seen[op], pos[op] = true, k
	}
	if len(order) != c.nops {
		t.Fatalf("order %v has %d ops, want %d", order, len(order), c.nops)
	}
	for i, p := range c.producer {
		for _, q := range c.consumers[i] {
			if p >= 0 && pos[q] < pos[p] {
				t.Fatalf("order %v runs consumer %d before producer %d", order, q, p)
			}
		}
	}
}

// TestFreeOrderLowersPeak: two independent chains, each holding a big
// tensor between its two ops. Run as listed (both starts, then both
// ends) both big tensors are alive together; one chain after the other,
// only one is.
func TestFreeOrderLowersPeak(t *testing.T) {
	g := &Graph{Order: "free", Alignment: 1,
		Ops: []Op{{ID: "a1"}, {ID: "b1"}, {ID: "a2"}, {ID: "b2"}},
		Tensors: []Tensor{
			{ID: "A", Bytes: 1000, Producer: "a1", Consumers: []string{"a2"}},
			{ID: "B", Bytes: 1000, Producer: "b1", Consumers: []string{"b2"}},
		}}
	r0, err := Plan(g, Options{})
	if err != nil || r0.Peak != 2000 {
		t.Fatalf("listed order: peak %v, err %v; want 2000", r0.Peak, err)
	}
	r, err := Plan(g, Options{Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil || r.Peak != 1000 {
		t.Fatalf("chosen order: peak %v, err %v; want 1000", r.Peak, err)
	}
}

// TestSearchStopsAndImproves: on random graphs the search must sometimes
// beat both greedy orders (on the real networks, see TestRealNetworks).
func TestSearchStopsAndImproves(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	better := 0
	for range 300 {
		g := randomGraph(rng, false)
		r, err := Plan(g, Options{Rand: rng, Iters: 400})
		if err != nil {
			t.Fatal(err)
		}
		if r.Peak < min(r.BySize, r.ByBreadth) {
			better++
		}
	}
	if better == 0 {
		t.Fatal("the search never improved on the baselines in 300 random graphs")
	}
	t.Logf("search beat both baselines on %d of 300 random graphs", better)
}

func TestStopEndsSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var g *Graph
	for g == nil {
		h := randomGraph(rng, false)
		if r, err := Plan(h, Options{}); err == nil && r.Peak > r.LowerBound {
			g = h // the search has work to do
		}
	}
	calls := 0
	r, err := Plan(g, Options{Rand: rng, Iters: 1 << 30, Stop: func() bool { calls++; return true }})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || r.Peak != min(r.BySize, r.ByBreadth) {
		t.Fatalf("Stop polled %d times, peak %d: want one poll and the baseline", calls, r.Peak)
	}
}

func TestBadPlanIsAnError(t *testing.T) {
	p := newProblem([]int64{8, 8}, []int64{8, 8}, []Interval{{0, 1}, {1, 2}})
	if err := checkPlan(p, []int64{0, 8}, 16, "x"); err != nil {
		t.Fatalf("good plan rejected: %v", err)
	}
	for _, c := range []struct {
		off  []int64
		peak int64
	}{{[]int64{0, 0}, 8}, {[]int64{0, 4}, 12}, {[]int64{0, 8}, 15}, {[]int64{-8, 8}, 16}} {
		if err := checkPlan(p, c.off, c.peak, "x"); !errors.Is(err, ErrBadPlan) {
			t.Errorf("offsets %v peak %d: got %v, want ErrBadPlan", c.off, c.peak, err)
		}
	}
}

// TestStopPolledEachPlacementOnBigGraphs: from pollEvery tensors a
// placement is slow, so Stop is polled before each one and a deadline
// is met within one placement, not 64.
func TestStopPolledEachPlacementOnBigGraphs(t *testing.T) {
	g := synthGraph(rand.New(rand.NewPCG(7, 7)), 2*pollEvery)
	calls := 0
	r, err := Plan(g, Options{Rand: rand.New(rand.NewPCG(1, 1)), Iters: 10, Stop: func() bool { calls++; return false }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Peak > r.LowerBound && calls < 10 {
		t.Fatalf("Stop polled %d times in 10 placements; want at least 10", calls)
	}
}

// TestStopSkipsOrderChoice: once Stop says the time is up, a free-order
// graph keeps its listed order's plan instead of planning a second order.
func TestStopSkipsOrderChoice(t *testing.T) {
	g := &Graph{Order: "free", Alignment: 1,
		Ops: []Op{{ID: "a1"}, {ID: "b1"}, {ID: "a2"}, {ID: "b2"}},
		Tensors: []Tensor{
			{ID: "A", Bytes: 1000, Producer: "a1", Consumers: []string{"a2"}},
			{ID: "B", Bytes: 1000, Producer: "b1", Consumers: []string{"b2"}},
		}}
	r, err := Plan(g, Options{Rand: rand.New(rand.NewPCG(1, 1)), Stop: func() bool { return true }})
	if err != nil || r.Peak != 2000 {
		t.Fatalf("stopped plan: peak %v, err %v; want the listed order's 2000", r.Peak, err)
	}
}
