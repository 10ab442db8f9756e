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
	"schedules-spsa": func(s *genome.Space, seed uint64) evolve.Strategy { return schedules.New(s, seed, schedules.Options{}) },
	"portfolio": func(s *genome.Space, seed uint64) evolve.Strategy {
		return evolve.NewPortfolio(s, seed, PortfolioMembers(), evolve.PortfolioOptions{})
	},
}

func es(s *genome.Space, seed uint64) evolve.Strategy {
	return evolve.NewES(s, seed, evolve.ESOptions{})
}

// PortfolioMembers are the strategies the portfolio chooses among.
func PortfolioMembers() []evolve.Member {
	return []evolve.Member{
		{Name: "es", New: es},
		{Name: "quantumsearch", New: qs},
		{Name: "schedules", New: sched},
	}
}

func sched(s *genome.Space, seed uint64) evolve.Strategy {
	return schedules.NewDescent(s, seed, schedules.DescentOptions{})
}

// Get returns the factory of a strategy.
func Get(name string) (evolve.Factory, bool) {
	f, ok := registry[name]
	return f, ok
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
