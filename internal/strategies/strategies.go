package strategies

import (
	"slices"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	quantumsearch "github.com/quasim/quasim/quantum_search"
	"github.com/quasim/quasim/schedules"
)

// Default is the strategy quasimd tunes with.
const Default = "portfolio"

var registry = map[string]evolve.Factory{
	"random":        func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewRandom(s, seed) },
	"es":            es,
	"quantumsearch": qs,
	"schedules": func(s *genome.Space, seed uint64) evolve.Strategy {
		return schedules.NewDescent(s, seed, schedules.DescentOptions{})
	},
	"forest":         forest,
	"local":          local,
	"schedules-spsa": func(s *genome.Space, seed uint64) evolve.Strategy { return schedules.New(s, seed, schedules.Options{}) },
	"portfolio": func(s *genome.Space, seed uint64) evolve.Strategy {
		return evolve.NewPortfolio(s, seed, PortfolioMembers(), evolve.PortfolioOptions{})
	},
}

func es(s *genome.Space, seed uint64) evolve.Strategy {
	return evolve.NewES(s, seed, evolve.ESOptions{})
}

// memberNames are the strategies the default portfolio chooses among, in
// order. schedules left it in round four (docs/evidence/search-quality.md,
// sixth pass): beside quantumsearch fitted to ranks, the evaluations it
// took paid less than the others'. A policy stored with it restores as a
// fresh search told every stored trial (tuner.resume).
var memberNames = []string{"es", "quantumsearch", "forest"}

var memberFactories = map[string]evolve.Factory{
	"es": es, "quantumsearch": qs, "schedules": sched, "forest": forest, "local": local,
}

// PortfolioMembers are the strategies the portfolio chooses among.
func PortfolioMembers() []evolve.Member {
	out := make([]evolve.Member, len(memberNames))
	for i, n := range memberNames {
		out[i] = evolve.Member{Name: n, New: memberFactories[n]}
	}
	return out
}

func sched(s *genome.Space, seed uint64) evolve.Strategy {
	return schedules.NewDescent(s, seed, schedules.DescentOptions{})
}

// Get returns the factory of a strategy spec (see Parse).
func Get(spec string) (evolve.Factory, bool) {
	f, err := Parse(spec)
	return f, err == nil
}

// Names lists the strategies, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func qs(s *genome.Space, seed uint64) evolve.Strategy {
	return quantumsearch.New(s, seed, quantumsearch.Options{})
}

func local(s *genome.Space, seed uint64) evolve.Strategy {
	return evolve.NewLocal(s, seed, evolve.LocalOptions{})
}

func forest(s *genome.Space, seed uint64) evolve.Strategy {
	return evolve.NewForest(s, seed, evolve.ForestOptions{})
}
