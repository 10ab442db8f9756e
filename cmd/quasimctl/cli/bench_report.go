package cli

import (
	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/evolve"
)

// This file scores the runs into bench's report (its JSON output).

// benchReport is the JSON output of bench.
type benchReport struct {
	Budget     int                        `json:"budget"`
	Seeds      int                        `json:"seeds"`
	Batch      int                        `json:"batch"`
	Ks         []int                      `json:"ks"`
	Spaces     []spaceInfo                `json:"spaces"`
	Scores     []evolve.Score             `json:"scores"`
	Mean       []evolve.Score             `json:"mean"`
	RandomExp  map[string]map[int]float64 `json:"random_expectation"`
	RandomMean map[int]float64            `json:"random_expectation_mean"`
	Peers      *peerComparison            `json:"peers,omitempty"`
	// Spread is, per strategy and k, the standard deviation over seeds
	// of the seed's mean over the spaces.
	Spread map[string]map[int]float64 `json:"seed_spread"`
	// LOO is leave-one-space-out selection among the variants of a
	// strategy (bench score --loo).
	LOO *looReport `json:"loo,omitempty"`
	// Versus pairs each strategy with one of them seed by seed (--versus).
	Versus *versusReport `json:"versus,omitempty"`
}

type spaceInfo struct {
	Name    string  `json:"name"`
	Configs int     `json:"configs"`
	Valid   int     `json:"valid"`
	Optimum float64 `json:"optimum_ms"`
	Device  string  `json:"device"`
	// Objective is what the recording measured as its objective when
	// not time (then optimum_ms is the minimised value, see Rule, and
	// OptimumValue the best objective value), and Rule how a run's
	// fraction of the optimum is computed.
	Objective    string  `json:"objective,omitempty"`
	Maximize     bool    `json:"maximize,omitempty"`
	OptimumValue float64 `json:"optimum_value,omitempty"`
	Rule         string  `json:"fraction_rule"`
	// FrameworkMS is the recording tuner's own time per config (Kernel
	// Tuner's framework_time), to set beside a strategy's overhead.
	FrameworkMS float64 `json:"framework_ms_per_config,omitempty"`
}

// benchKs are the metric's evaluation counts that a run can reach: none
// past the budget or the largest space, where every fraction would only
// repeat the last one; the budget itself when no count is that small.
func benchKs(budget int, spaces []benchSpace) []int {
	most := 0
	for _, s := range spaces {
		most = max(most, s.Size)
	}
	budget = min(budget, most)
	var ks []int
	for _, k := range evolve.Ks {
		if k <= budget {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 && budget > 0 {
		ks = []int{budget}
	}
	return ks
}

func report(o benchOptions, spaces []benchSpace, runsOf func(space, strategy string) []evolve.BenchRun) benchReport {
	ks := benchKs(o.budget, spaces)
	rep := benchReport{
		Budget: o.budget, Seeds: o.seeds, Batch: o.batch, Ks: ks,
		RandomExp: map[string]map[int]float64{}, RandomMean: map[int]float64{},
		Spread: map[string]map[int]float64{},
	}
	optimum := map[string]float64{}
	for _, s := range spaces {
		info := spaceInfo{Name: s.Name, Configs: s.Size, Valid: len(s.Valid), Optimum: s.Optimum, Device: s.rec.Device(), FrameworkMS: s.rec.FrameworkMS()}
		var obj string
		obj, info.Maximize, info.Rule = s.rec.Objective()
		if obj != "time" || info.Rule != replay.RuleRatio {
			_, best := s.rec.Optimum()
			t, _ := s.rec.Trial(best)
			info.Objective = obj
			info.OptimumValue, _ = s.rec.Value(t)
		}
		rep.Spaces = append(rep.Spaces, info)
		exp := map[int]float64{}
		for _, k := range ks {
			exp[k] = evolve.RandomExpectation(s.Valid, s.Size, k)
			rep.RandomMean[k] += exp[k] / float64(len(spaces))
		}
		rep.RandomExp[s.Name] = exp
		optimum[s.Name] = s.Optimum
	}
	runsAll := map[string][]evolve.BenchRun{}
	for _, st := range o.strategies {
		var per []evolve.Score
		var all []evolve.BenchRun
		for _, s := range spaces {
			runs := runsOf(s.Name, st)
			sc := evolve.ScoreRuns(s.Name, st, runs, s.Optimum, ks)
			per = append(per, sc)
			rep.Scores = append(rep.Scores, sc)
			all = append(all, runs...)
		}
		rep.Mean = append(rep.Mean, evolve.Mean(st, per, ks))
		rep.Spread[st] = evolve.SeedSpread(all, func(s string) float64 { return optimum[s] }, ks)
		runsAll[st] = all
	}
	if o.versus != "" {
		rep.Versus = &versusReport{Base: o.versus, Paired: map[string]evolve.Paired{}}
		for _, st := range o.strategies {
			if st != o.versus {
				rep.Versus.Paired[st] = evolve.PairedDiff(runsAll[st], runsAll[o.versus], func(s string) float64 { return optimum[s] }, ks)
			}
		}
	}
	return rep
}
