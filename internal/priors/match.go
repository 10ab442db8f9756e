package priors

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
)

// Job is what sources are matched against: the kernel's names (its spec's,
// and the kernel function's own where known, which is what Kernel Tuner
// records), the SHA-256 of its source when it is tuned from source, its
// objective (evaluate.Objective's String; empty: time), and the space it is
// tuned in.
type Job struct {
	Names        []string
	SourceSHA256 string
	Objective    string
	Space        *genome.Space
}

// Matches reports whether s measured job's kernel, by source hash when both
// have one, else by name, and ranked its configs by job's objective.
func (s *Source) Matches(job Job) bool {
	if !s.ranksBy(job.Objective) {
		return false
	}
	if s.SourceSHA256 != "" && job.SourceSHA256 != "" {
		return s.SourceSHA256 == job.SourceSHA256
	}
	return s.Kernel != "" && slices.Contains(job.Names, s.Kernel)
}

// ranksBy reports whether s's ranking is one by objective: the same
// objective, or for time a rate (higher better), which orders a problem's
// configs as time does. Energy rankings do not stand in for time, nor
// time for energy: the fastest config is often not the most frugal.
func (s *Source) ranksBy(objective string) bool {
	own := cmp.Or(s.Objective, "time")
	objective = cmp.Or(objective, "time")
	return own == objective || objective == "time" && s.Maximized
}

// For returns the sources of p that match job and skip does not drop, their
// configs translated into job's space (valid ones only), each result's
// value its rank quantile: what evolve.RankTransfer takes. A source with no
// valid config of job's space is left out.
func (p *Pack) For(job Job, skip func(*Source) bool) []evolve.Source {
	var out []evolve.Source
	for i := range p.Sources {
		s := &p.Sources[i]
		if !s.Matches(job) || (skip != nil && skip(s)) {
			continue
		}
		from, err := s.space()
		if err != nil {
			continue // Decode refuses such a source; a Pack made in code may hold one
		}
		src := evolve.Source{Name: s.Name}
		add := func(c genome.Config, ok bool, v float64) {
			tc, found := job.Space.Translate(from, c)
			if found && job.Space.Valid(tc) {
				src.Results = append(src.Results, evolve.Result{Config: tc, OK: ok, Value: v})
			}
		}
		for i := range s.Valid() {
			add(s.config(s.Configs, i), true, s.Quantiles[i])
		}
		for i := range s.NumFailed() {
			add(s.config(s.Failed, i), false, 0)
		}
		if len(src.Results) > 0 {
			out = append(out, src)
		}
	}
	return out
}

// space is s's parameters as a space (string values, no constraints), to
// translate from.
func (s *Source) space() (*genome.Space, error) {
	ps := make([]genome.Param, len(s.Params))
	for i, p := range s.Params {
		ps[i] = genome.Param{Name: p.Name, Kind: genome.KindString}
		for _, v := range p.Values {
			ps[i].Values = append(ps[i].Values, genome.Str(v))
		}
	}
	sp, err := genome.NewSpace(ps, genome.SpaceOptions{})
	if err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	return sp, nil
}
