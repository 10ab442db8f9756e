package strategies

import (
	"slices"
	"strings"
	"testing"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/evolve/evolvetest"
)

func TestParse(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	for _, spec := range []string{
		"portfolio", "portfolio:alloc=uniform", "portfolio:members=es+forest:explore=0.2",
		"portfolio:discount=0.9:init=5", "portfolio:forest.trees=8:members=es+forest", "forest:trees=8:minleaf=3:random=50:starts=2:features=0.5", "es",
		"portfolio:candidates=4", "quantumsearch:tempering=on:chains=4:sweeps=10", "forest:prior=0:priordraw=0", "portfolio:forest.prior=30", "portfolio:quantumsearch.tempering=on:members=es+quantumsearch",
		"quantumsearch:targets=rank", "forest:targets=log", "portfolio:quantumsearch.targets=rank:forest.targets=rank",
		"portfolio:members=es+schedules+local:local.incumbent=on:local.from=20:local.first=on:schedules.until=20",
	} {
		f, err := Parse(spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", spec, err)
			continue
		}
		if _, err := evolve.Run(t.Context(), bs, f, 1, evolve.RunOptions{Budget: 30}); err != nil {
			t.Errorf("%s: %v", spec, err)
		}
	}
	// A member subset really is the portfolio's members.
	f, _ := Parse("portfolio:members=es+forest")
	p := f(bs.Space, 1).(*evolve.Portfolio)
	if got := p.Allocation(); len(got) != 3 || !hasKeys(got, "es", "forest", evolve.DesignName) {
		t.Errorf("members=es+forest: allocation %v, want es, forest and the design", got)
	}
	// A member's option reaches the member: the traces part.
	trace := func(spec string) []string {
		f, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		r, err := evolve.Run(t.Context(), bs, f, 1, evolve.RunOptions{Budget: 80})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, m := range r.Trace {
			keys = append(keys, m.Key)
		}
		return keys
	}
	if slices.Equal(trace("portfolio:members=forest"), trace("portfolio:members=forest:forest.trees=2:forest.random=5")) {
		t.Errorf("portfolio:forest.trees=2 gave the default forest's trace")
	}
	if slices.Equal(trace("portfolio:members=quantumsearch"), trace("portfolio:members=quantumsearch:quantumsearch.tempering=on")) {
		t.Errorf("portfolio:quantumsearch.tempering=on gave the default annealer's trace")
	}
	if slices.Equal(trace("portfolio:members=quantumsearch"), trace("portfolio:members=quantumsearch:quantumsearch.targets=log")) {
		t.Errorf("portfolio:quantumsearch.targets=log gave the default annealer's trace")
	}
	if slices.Equal(trace("portfolio:members=forest"), trace("portfolio:members=forest:forest.targets=rank")) {
		t.Errorf("portfolio:forest.targets=rank gave the default forest's trace")
	}
	// A member's window reaches the portfolio: the traces part.
	if slices.Equal(trace("portfolio:members=es+local"), trace("portfolio:members=es+local:local.from=40")) {
		t.Errorf("portfolio:local.from=40 gave the trace without a window")
	}
	for spec, want := range map[string]string{
		"nosuch":                      `unknown strategy "nosuch"`,
		"portfolio:alloc=greedy":      "option alloc: want bandit, uniform or roundrobin",
		"portfolio:members=es+sa":     `no member "sa"`,
		"portfolio:speed=3":           `unknown option "speed" (have alloc, candidates, discount, explore, failure, init, judge, members, reward, screen)`,
		"portfolio:init=0":            "option init: want a positive integer",
		"portfolio:explore":           `option "explore": want key=value`,
		"portfolio:init=3:init=4":     `option "init" given twice`,
		"forest:trees=x":              "option trees: want a positive integer",
		"portfolio:forest.leaves=3":   `forest member: unknown option "leaves"`,
		"es:mu=3":                     "takes no options",
		"portfolio:es.mu=3":           `no member "es" takes options`,
		"quantumsearch:tempering=1":   "option tempering: want on or off",
		"portfolio:explore=-1":        "want a number >= 0",
		"quantumsearch:targets=ranks": `option targets: want log or rank, not "ranks"`,
		"portfolio:judge=best":        "want ei, mean or bandit",
		"portfolio:local.from=10":     `option local.from: "local" is not a member`,
		"portfolio:es.until=x":        "option es.until: want an integer >= 0",
		"portfolio:es.first=1":        "option es.first: want on or off",
		"portfolio:sa.from=3":         `no member "sa"`,
	} {
		_, err := Parse(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", spec, err, want)
		}
	}
}

func hasKeys(m map[string]int, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}
