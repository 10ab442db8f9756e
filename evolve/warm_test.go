package evolve

import (
	"context"
	"slices"
	"testing"

	"github.com/quasim/quasim/genome"
)

func TestRankTransfer(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	all := bs.Space.All()
	a, b, c, d := all[0], all[1], all[2], all[3]
	// Source 1 is ten times slower than source 2: only ranks may count.
	s1 := Source{Name: "slow", Results: []Result{{Config: a, OK: true, Value: 30}, {Config: b, OK: true, Value: 10}, {Config: c, OK: false}}}
	s2 := Source{Name: "fast", Results: []Result{{Config: a, OK: true, Value: 2}, {Config: b, OK: true, Value: 1}, {Config: c, OK: true, Value: 3}, {Config: d, OK: true, Value: 1}}}
	got := RankTransfer(bs.Space, []Source{s1, s2})
	// Quantiles: s1 b=0 a=1 c=1 (failed); s2 b,d=1/6 (tied) a=2/3 c=1.
	// Means: b=1/12, d=1/6, a=5/6, c=1.
	want := []genome.Config{b, d, a, c}
	if len(got) != len(want) {
		t.Fatalf("got %d configs, want %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Fatalf("rank %d = %v, want %v (all %v)", i, got[i], want[i], got)
		}
	}
	if len(RankTransfer(bs.Space, nil)) != 0 {
		t.Error("no sources gave a ranking")
	}
}

func TestRankedProposesInOrder(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	all := bs.Space.All()
	r := NewRanked(bs.Space, []genome.Config{all[5], all[3], all[5], all[9]})
	if err := r.Tell([]Result{{Config: all[3], OK: true, Value: 1}}); err != nil {
		t.Fatal(err)
	}
	cs, _ := r.Ask(10)
	if len(cs) != 2 || !cs[0].Equal(all[5]) || !cs[1].Equal(all[9]) {
		t.Fatalf("Ask = %v, want [%v %v]", cs, all[5], all[9])
	}
	if cs, _ := r.Ask(1); len(cs) != 0 {
		t.Fatalf("Ask past the ranking = %v", cs)
	}
}

// A warm-started portfolio's state restores into a portfolio that was not
// warm-started (the daemon's next cycle) and goes on identically.
func TestWarmPortfolioResumesCold(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	members := []Member{
		{Name: "es", New: func(s *genome.Space, seed uint64) Strategy { return NewES(s, seed, ESOptions{}) }},
		{Name: "random", New: func(s *genome.Space, seed uint64) Strategy { return NewRandom(s, seed) }},
	}
	var src Source
	for _, c := range bs.Space.All() {
		m, _ := bs.Measure(c)
		src.Results = append(src.Results, Result{Config: c, OK: m.OK, Value: m.Time})
	}
	prior := RankTransfer(bs.Space, []Source{src})
	warm := func(s *genome.Space, seed uint64) Strategy {
		p := NewPortfolio(s, seed, members, PortfolioOptions{})
		p.WarmStart(prior)
		return p
	}
	a, err := Run(context.Background(), bs, warm, 5, RunOptions{Budget: 120})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Trace[0].By; got != WarmName {
		t.Errorf("first evaluation by %q, want %q", got, WarmName)
	}
	if a.Trace[0].Key != bs.Space.Key(prior[0]) {
		t.Errorf("first evaluation %s, want the prior's best %s", a.Trace[0].Key, bs.Space.Key(prior[0]))
	}
	n := 0
	for _, m := range a.Trace {
		if m.By == TransferName {
			n++
		}
	}
	if n == 0 {
		t.Error("the transfer member was never picked")
	}
	// Resume into a plain portfolio at 40 evaluations.
	p := warm(bs.Space, 5).(*Portfolio)
	b, _ := Run(context.Background(), bs, func(s *genome.Space, seed uint64) Strategy {
		if seed == 5 {
			return p
		}
		return NewPortfolio(s, seed, members, PortfolioOptions{})
	}, 5, RunOptions{Budget: 120, RoundTripAt: 40})
	if !slices.Equal(keys(a.Trace), keys(b.Trace)) {
		t.Fatalf("resumed into a cold portfolio, the run differs at evaluation %d", firstDiff(keys(a.Trace), keys(b.Trace)))
	}
	if got := p.Allocation()[TransferName]; got == 0 {
		t.Errorf("allocation %v has no transfer", p.Allocation())
	}
}

// Once a valid config is known, Ranked proposes the best-ranked config one
// parameter away from the best one, before the ranking's own order.
func TestRankedLocalStep(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	all := bs.Space.All()
	best := all[len(all)/2]
	var near, far genome.Config
	for _, c := range all {
		d := 0
		for i := range c {
			if c[i] != best[i] {
				d++
			}
		}
		if d == 1 && near == nil {
			near = c
		}
		if d > 2 && far == nil {
			far = c
		}
	}
	r := NewRanked(bs.Space, []genome.Config{far, near})
	if err := r.Tell([]Result{{Config: best, OK: true, Value: 1}}); err != nil {
		t.Fatal(err)
	}
	cs, _ := r.Ask(2)
	if len(cs) != 2 || !cs[0].Equal(near) || !cs[1].Equal(far) {
		t.Fatalf("Ask = %v, want the neighbour %v then %v", cs, near, far)
	}
}

// On a space too large to list, rank transfer ranks the configs the
// sources measured, ties in All's (lexicographic) order, and a portfolio
// warm-starts from it without listing the space.
func TestRankTransferLargeSpace(t *testing.T) {
	t.Parallel()
	var params []genome.Param
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		params = append(params, genome.Param{Name: n, Values: []genome.Value{
			genome.Int(1), genome.Int(2), genome.Int(3), genome.Int(4), genome.Int(5), genome.Int(6), genome.Int(7), genome.Int(8)}})
	}
	s, err := genome.NewSpace(params, genome.SpaceOptions{Constraints: []string{"a <= b"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Enumerable() {
		t.Fatalf("a space of %d configs is listed", s.Size())
	}
	x := genome.Config{1, 1, 0, 0, 0, 0, 0}
	y := genome.Config{0, 1, 0, 0, 0, 0, 0}
	z := genome.Config{0, 0, 5, 0, 0, 0, 0}
	bad := genome.Config{3, 1, 0, 0, 0, 0, 0} // a > b: not in the space
	src := Source{Results: []Result{{Config: x, OK: true, Value: 1}, {Config: bad, OK: true, Value: 0.5}, {Config: z, OK: true, Value: 1}, {Config: y, OK: true, Value: 3}}}
	got := RankTransfer(s, []Source{src})
	want := []genome.Config{z, x, y} // x and z tie: z first in All order
	if len(got) != len(want) {
		t.Fatalf("ranking %v, want %v", got, want)
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Fatalf("ranking %v, want %v", got, want)
		}
	}
	p := NewPortfolio(s, 1, []Member{{Name: "random", New: func(s *genome.Space, seed uint64) Strategy { return NewRandom(s, seed) }}}, PortfolioOptions{})
	p.WarmStart(got)
	cs, err := p.Ask(6)
	if err != nil || len(cs) != 6 || !cs[0].Equal(z) {
		t.Fatalf("warm portfolio asked %v, %v; want %v first", cs, err, z)
	}
	if s.Listed() {
		t.Fatal("the space was listed")
	}
}
