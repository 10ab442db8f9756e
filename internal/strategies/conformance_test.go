package strategies

import (
	"bytes"
	"testing"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/evolve/evolvetest"
	"github.com/quasim/quasim/genome"
)

func TestConformance(t *testing.T) {
	// Options that change how a strategy proposes, beside the plain names.
	variants := []string{"quantumsearch:tempering=on", "portfolio:judge=mean", "portfolio:judge=ei:failure=on", "portfolio:screen=3"}
	for _, name := range append(Names(), variants...) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, _ := Get(name)
			evolvetest.Conformance(t, f, true)
		})
	}
}

// A warm-started portfolio, as the daemon and bench --warm-from run it,
// keeps every promise too, with the transfer member restored from state.
func TestWarmPortfolioConformance(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	// A prior that ranks by a distorted objective: the same kernel on a
	// device that agrees only roughly.
	var src evolve.Source
	for _, c := range bs.Space.All() {
		m, _ := bs.Measure(c)
		src.Results = append(src.Results, evolve.Result{Config: c, OK: m.OK, Value: m.Time * float64(1+c[3])})
	}
	prior := evolve.RankTransfer(bs.Space, []evolve.Source{src})
	pf, _ := Get("portfolio")
	evolvetest.Conformance(t, func(s *genome.Space, seed uint64) evolve.Strategy {
		p := pf(s, seed)
		p.(evolve.WarmStarter).WarmStart(prior)
		return p
	}, true)
}

// Each default portfolio member takes back a proposal a pooled portfolio
// did not measure: it is no longer pending, so the member neither waits
// for it nor is barred from proposing it again, and its state keeps no
// trace of it.
func TestMembersWithdraw(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	for _, m := range PortfolioMembers() {
		s := m.New(bs.Space, 5)
		w, ok := s.(evolve.Withdrawer)
		if !ok {
			t.Errorf("%s cannot withdraw a proposal", m.Name)
			continue
		}
		var rs []evolve.Result
		for range 30 {
			cs, err := s.Ask(1)
			if err != nil || len(cs) != 1 {
				t.Fatalf("%s: Ask: %v %v", m.Name, cs, err)
			}
			mm, _ := bs.Measure(cs[0])
			rs = append(rs, evolve.Result{Config: cs[0], OK: mm.OK, Value: mm.Time})
			if err := s.Tell(rs[len(rs)-1:]); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := s.MarshalBinary()
		cs, _ := s.Ask(1)
		w.Withdraw(cs[0])
		after, _ := s.MarshalBinary()
		fresh := m.New(bs.Space, 5)
		if err := fresh.UnmarshalBinary(after); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		pending := []byte(`"pending":`)
		if bytes.Contains(before, pending) || bytes.Contains(after, pending) {
			t.Errorf("%s: a withdrawn proposal is still pending in its state", m.Name)
		}
	}
}
