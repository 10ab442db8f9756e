package memgraph

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPrefetchHand: two ops of 1 ms, each reading a 1 MB host tensor,
// at 1 GB/s (1 ms per copy). With room for both, w1's copy runs during
// op0 and op1 starts as soon as op0 ends: 3 ms against 4 ms serially.
// With room for one weight only, w1 must wait until w0 is released.
func TestPrefetchHand(t *testing.T) {
	g := &Graph{Ops: []Op{{ID: "op0", Duration: 1e6}, {ID: "op1", Duration: 1e6}}, Tensors: []Tensor{
		{ID: "w0", Bytes: 1e6, Host: true, Consumers: []string{"op0"}},
		{ID: "w1", Bytes: 1e6, Host: true, Consumers: []string{"op1"}},
		{ID: "x", Bytes: 1000, Producer: "op0", Consumers: []string{"op1"}},
	}}
	r, err := Plan(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Prefetch(g, r, PrefetchOptions{Bandwidth: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	if s.Makespan != 3e6 || s.NoOverlap != 4e6 || s.ComputeOnly != 2e6 || s.Copies[1].Start != 1e6 || s.Ops[1].Start != 2e6 || s.PeakBytes != 2e6+1000 {
		t.Fatalf("%+v", s)
	}
	s, err = Prefetch(g, r, PrefetchOptions{Bandwidth: 1e9, Cap: 1e6 + 1000})
	if err != nil {
		t.Fatal(err)
	}
	if s.Makespan != 4e6 || s.Copies[1].Start != 2e6 || s.PeakBytes != 1e6+1000 {
		t.Fatalf("%+v", s)
	}
	if _, err = Prefetch(g, r, PrefetchOptions{Bandwidth: 1e9, Cap: 1e6}); !errors.Is(err, ErrCapTooSmall) || !strings.Contains(err.Error(), `op "op0" needs 1001000 bytes`) {
		t.Fatalf("got %v, want ErrCapTooSmall naming op0", err)
	}
	for _, o := range []PrefetchOptions{{}, {Bandwidth: 1e9, LatencyNS: -1}, {Bandwidth: 1e9, Cap: -5}} {
		if _, err = Prefetch(g, r, o); !errors.Is(err, ErrBadOptions) {
			t.Errorf("%+v: got %v, want ErrBadOptions", o, err)
		}
	}
}

// TestPrefetchEvicts: w is used by op0 and op3; holding it across op1 and
// op2 would break the cap, so it is copied twice.
func TestPrefetchEvicts(t *testing.T) {
	g := &Graph{Ops: []Op{{ID: "op0", Duration: 10}, {ID: "op1", Duration: 10}, {ID: "op2", Duration: 10}, {ID: "op3", Duration: 10}}, Tensors: []Tensor{
		{ID: "w", Bytes: 100, Host: true, Consumers: []string{"op0", "op3"}},
		{ID: "big", Bytes: 150, Producer: "op1", Consumers: []string{"op2"}},
	}}
	r, err := Plan(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Prefetch(g, r, PrefetchOptions{Bandwidth: 1 << 30, Cap: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Copies) != 2 || s.Recopies != 1 || s.Copies[1].Start < s.Ops[2].End {
		t.Fatalf("%+v", s)
	}
	if s, err = Prefetch(g, r, PrefetchOptions{Bandwidth: 1 << 30, Cap: 250}); err != nil || len(s.Copies) != 1 {
		t.Fatalf("room to keep it: %+v, %v", s, err)
	}
}

// randomPrefetch gives a random graph op durations and random options
// whose cap every op fits, or no cap.
func randomPrefetch(rng *rand.Rand, g *Graph, r *Result) PrefetchOptions {
	opt := PrefetchOptions{Bandwidth: MinBandwidth << rng.IntN(12), LatencyNS: rng.Int64N(3) * 100}
	if rng.IntN(4) > 0 {
		c, _ := compile(g)
		m := newPrefetchModel(g, c, r)
		var need, all int64
		for k := range m.act {
			x := m.act[k]
			for _, t := range m.hostAt[k] {
				x += c.size[t]
			}
			need = max(need, x)
		}
		for i := range c.size {
			all += c.size[i]
		}
		opt.Cap = need + rng.Int64N(all-need+1)
	}
	return opt
}

// TestPrefetchRandomGraphs: on 3,000 random graphs, Prefetch returns a
// schedule (it checked it), never slower than copying then computing
// serially and never faster than the ops alone.
func TestPrefetchRandomGraphs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	n := 3000
	if testing.Short() {
		n = 1000
	}
	withCopies := 0
	for k := range n {
		g := randomGraph(rng, k%3 == 0)
		for k := range g.Ops {
			g.Ops[k].Duration = rng.Int64N(5000)
		}
		r, err := Plan(g, Options{Rand: rng, Iters: 10})
		if err != nil {
			t.Fatal(err)
		}
		opt := randomPrefetch(rng, g, r)
		s, err := Prefetch(g, r, opt)
		if err != nil {
			t.Fatalf("graph %d, %+v: %v", k, opt, err)
		}
		if s.Makespan < s.ComputeOnly || s.Makespan > s.NoOverlap || s.NoOverlap != s.ComputeOnly+s.CopyTime {
			t.Fatalf("graph %d: makespan %d, compute %d, serial %d", k, s.Makespan, s.ComputeOnly, s.NoOverlap)
		}
		if len(s.Copies) > 0 {
			withCopies++
		}
	}
	if withCopies < n/4 {
		t.Fatalf("only %d of %d graphs had copies", withCopies, n)
	}
}

// TestCheckScheduleCatches: each way of breaking a valid schedule is
// rejected.
func TestCheckScheduleCatches(t *testing.T) {
	g := &Graph{Ops: []Op{{ID: "op0", Duration: 1e6}, {ID: "op1", Duration: 1e6}}, Tensors: []Tensor{
		{ID: "w0", Bytes: 1e6, Host: true, Consumers: []string{"op0"}},
		{ID: "w1", Bytes: 1e6, Host: true, Consumers: []string{"op1"}},
		{ID: "x", Bytes: 1000, Producer: "op0", Consumers: []string{"op1"}},
	}}
	r, _ := Plan(g, Options{})
	opt := PrefetchOptions{Bandwidth: 1e9}
	good, err := Prefetch(g, r, opt)
	if err != nil {
		t.Fatal(err)
	}
	clone := func() *Schedule {
		s := *good
		s.Copies = append([]Copy(nil), good.Copies...)
		s.Ops = append([]OpTime(nil), good.Ops...)
		return &s
	}
	breaks := map[string]func(s *Schedule) PrefetchOptions{
		"op before its input": func(s *Schedule) PrefetchOptions {
			s.Ops[0].Start, s.Ops[0].End = 0, 1e6
			s.Copies[0].Start = 1
			s.Copies[0].End = 1e6 + 1
			return opt
		},
		"copies overlap":    func(s *Schedule) PrefetchOptions { s.Copies[1].Start, s.Copies[1].End = 5e5, 15e5; return opt },
		"copy too fast":     func(s *Schedule) PrefetchOptions { s.Copies[1].End--; return opt },
		"ops overlap":       func(s *Schedule) PrefetchOptions { s.Ops[1].Start, s.Ops[1].End = 19e5, 29e5; return opt },
		"op too short":      func(s *Schedule) PrefetchOptions { s.Ops[1].End--; s.Makespan--; return opt },
		"over the cap":      func(s *Schedule) PrefetchOptions { return PrefetchOptions{Bandwidth: 1e9, Cap: 1e6 + 1000} },
		"released early":    func(s *Schedule) PrefetchOptions { s.Copies[1].Release = s.Ops[0].End; return opt },
		"missing copy":      func(s *Schedule) PrefetchOptions { s.Copies = s.Copies[:1]; return opt },
		"not a host tensor": func(s *Schedule) PrefetchOptions { s.Copies[1].Tensor = "x"; return opt },
		"wrong op":          func(s *Schedule) PrefetchOptions { s.Ops[0].Op = "op1"; return opt },
		"copy serves wrong ops": func(s *Schedule) PrefetchOptions {
			s.Copies[1].FirstOp = "op0"
			s.Copies[1].LastOp = "op0"
			s.Copies[1].Release = s.Ops[0].End
			return opt
		},
	}
	for name, f := range breaks {
		s := clone()
		o := f(s)
		if _, err := CheckSchedule(g, r, o, s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := CheckSchedule(g, r, opt, clone()); err != nil {
		t.Fatal(err)
	}
}
