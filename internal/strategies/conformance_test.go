package strategies

import (
	"testing"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/evolve/evolvetest"
	"github.com/quasim/quasim/genome"
)

func TestConformance(t *testing.T) {
	// Options that change how a strategy proposes, beside the plain names.
	variants := []string{"quantumsearch:tempering=on"}
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
