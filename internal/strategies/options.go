package strategies

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	quantumsearch "github.com/quasim/quasim/quantum_search"
)

// Parse returns the factory a strategy spec names: a registered name,
// optionally followed by options, each ":key=value", as
// "portfolio:alloc=uniform:members=es+forest" or "forest:trees=32". The
// options are the hyperparameters leave-one-space-out chooses among
// (cmd/quasimctl bench, docs in docs/evidence/search-quality.md); the plain names are the
// defaults quasimd uses.
func Parse(spec string) (evolve.Factory, error) {
	name, rest, _ := strings.Cut(spec, ":")
	f, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown strategy %q (have %s)", name, strings.Join(Names(), ", "))
	}
	if rest == "" {
		return f, nil
	}
	opts := map[string]string{}
	for _, kv := range strings.Split(rest, ":") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("strategy %q: option %q: want key=value", spec, kv)
		}
		if _, dup := opts[k]; dup {
			return nil, fmt.Errorf("strategy %q: option %q given twice", spec, k)
		}
		opts[k] = v
	}
	var err error
	switch name {
	case "portfolio":
		f, err = portfolioWith(opts)
	case "forest":
		f, err = forestWith(opts)
	case "quantumsearch":
		f, err = quantumsearchWith(opts)
	case "local":
		f, err = localWith(opts)
	default:
		err = fmt.Errorf("takes no options")
	}
	if err != nil {
		return nil, fmt.Errorf("strategy %q: %w", spec, err)
	}
	return f, nil
}

// optionSetter parses one option into its field.
type optionSetter func(v string) error

func setFloat(dst *float64) optionSetter {
	return func(v string) error {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 {
			return fmt.Errorf("want a number >= 0, not %q", v)
		}
		*dst = x
		return nil
	}
}

// setOff is setFloat for an option whose struct zero means its default:
// a 0 given turns it off, stored as -1.
func setOff(dst *float64) optionSetter {
	set := setFloat(dst)
	return func(v string) error {
		if err := set(v); err != nil {
			return err
		}
		if *dst == 0 {
			*dst = -1
		}
		return nil
	}
}

func setInt(dst *int) optionSetter {
	return func(v string) error {
		x, err := strconv.Atoi(v)
		if err != nil || x <= 0 {
			return fmt.Errorf("want a positive integer, not %q", v)
		}
		*dst = x
		return nil
	}
}

func setOnOff(dst *bool) optionSetter {
	return func(v string) error {
		if v != "on" && v != "off" {
			return fmt.Errorf("want on or off, not %q", v)
		}
		*dst = v == "on"
		return nil
	}
}

func setTargets(dst *string) optionSetter {
	return func(v string) error {
		if err := evolve.CheckTargets(v); err != nil {
			return err
		}
		*dst = v
		return nil
	}
}

// apply runs the setter of each option, naming the options known when one
// is not.
func apply(opts map[string]string, setters map[string]optionSetter) error {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		set, ok := setters[k]
		if !ok {
			known := make([]string, 0, len(setters))
			for s := range setters {
				known = append(known, s)
			}
			slices.Sort(known)
			return fmt.Errorf("unknown option %q (have %s)", k, strings.Join(known, ", "))
		}
		if err := set(opts[k]); err != nil {
			return fmt.Errorf("option %s: %w", k, err)
		}
	}
	return nil
}

func portfolioWith(opts map[string]string) (evolve.Factory, error) {
	var po evolve.PortfolioOptions
	// "forest.trees=32" sets the forest member's option.
	factories := maps.Clone(memberFactories)
	sub := map[string]map[string]string{}
	// "local.from=100" and "schedules.until=100" bound when the bandit
	// may give a member evaluations, whichever member it is.
	from, until, first := map[string]int{}, map[string]int{}, map[string]bool{}
	for k, v := range opts {
		name, key, ok := strings.Cut(k, ".")
		if !ok {
			continue
		}
		if key == "first" {
			if _, known := memberFactories[name]; !known {
				return nil, fmt.Errorf("option %q: no member %q", k, name)
			}
			var on bool
			if err := setOnOff(&on)(v); err != nil {
				return nil, fmt.Errorf("option %s: %w", k, err)
			}
			first[name] = on
			delete(opts, k)
			continue
		}
		if key == "from" || key == "until" {
			if _, known := memberFactories[name]; !known {
				return nil, fmt.Errorf("option %q: no member %q", k, name)
			}
			dst := from
			if key == "until" {
				dst = until
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("option %s: want an integer >= 0, not %q", k, v)
			}
			dst[name] = n
			delete(opts, k)
			continue
		}
		if _, known := memberWith[name]; !known {
			return nil, fmt.Errorf("option %q: no member %q takes options (forest, quantumsearch, local do)", k, name)
		}
		if sub[name] == nil {
			sub[name] = map[string]string{}
		}
		sub[name][key] = v
		delete(opts, k)
	}
	for name, o := range sub {
		f, err := memberWith[name](o)
		if err != nil {
			return nil, fmt.Errorf("%s member: %w", name, err)
		}
		factories[name] = f
	}
	members := PortfolioMembers()
	for i := range members {
		members[i].New = factories[members[i].Name]
	}
	err := apply(opts, map[string]optionSetter{
		"alloc": func(v string) error {
			switch v {
			case "bandit":
			case "uniform":
				po.Uniform = true
			case "roundrobin":
				po.RoundRobin = true
			default:
				return fmt.Errorf("want bandit, uniform or roundrobin, not %q", v)
			}
			return nil
		},
		"reward": func(v string) error {
			if v != evolve.RewardRank && v != evolve.RewardBest {
				return fmt.Errorf("want rank or best, not %q", v)
			}
			po.Reward = v
			return nil
		},
		"judge": func(v string) error {
			if v != evolve.JudgeEI && v != evolve.JudgeMean && v != evolve.JudgeBandit {
				return fmt.Errorf("want ei, mean or bandit, not %q", v)
			}
			po.Judge = v
			return nil
		},
		"failure": func(v string) error {
			return setOnOff(&po.FailureModel)(v)
		},
		"explore":    setFloat(&po.Explore),
		"discount":   setFloat(&po.Discount),
		"init":       setInt(&po.Init),
		"screen":     setInt(&po.Screen),
		"candidates": setInt(&po.Candidates),
		"members": func(v string) error {
			members = nil
			for _, n := range strings.Split(v, "+") {
				f, ok := factories[n]
				if !ok {
					return fmt.Errorf("no member %q (have es, quantumsearch, schedules, forest, local)", n)
				}
				members = append(members, evolve.Member{Name: n, New: f})
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	for key, names := range map[string][]string{"from": slices.Collect(maps.Keys(from)), "until": slices.Collect(maps.Keys(until)), "first": slices.Collect(maps.Keys(first))} {
		for _, name := range names {
			if !slices.ContainsFunc(members, func(m evolve.Member) bool { return m.Name == name }) {
				return nil, fmt.Errorf("option %s.%s: %q is not a member", name, key, name)
			}
		}
	}
	for i := range members {
		n := members[i].Name
		members[i].From, members[i].Until, members[i].First = from[n], until[n], first[n]
	}
	return func(s *genome.Space, seed uint64) evolve.Strategy {
		return evolve.NewPortfolio(s, seed, members, po)
	}, nil
}

// memberWith parses a portfolio member's own options.
var memberWith = map[string]func(map[string]string) (evolve.Factory, error){
	"forest":        forestWith,
	"quantumsearch": quantumsearchWith,
	"local":         localWith,
}

func localWith(opts map[string]string) (evolve.Factory, error) {
	var lo evolve.LocalOptions
	err := apply(opts, map[string]optionSetter{
		"incumbent": setOnOff(&lo.Incumbent),
	})
	if err != nil {
		return nil, err
	}
	return func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewLocal(s, seed, lo) }, nil
}

func quantumsearchWith(opts map[string]string) (evolve.Factory, error) {
	var qo quantumsearch.Options
	err := apply(opts, map[string]optionSetter{
		"tempering": setOnOff(&qo.Tempering),
		"sweeps":    setInt(&qo.Sweeps),
		"chains":    setInt(&qo.Batch),
		"targets":   setTargets(&qo.Targets),
	})
	if err != nil {
		return nil, err
	}
	return func(s *genome.Space, seed uint64) evolve.Strategy { return quantumsearch.New(s, seed, qo) }, nil
}

func forestWith(opts map[string]string) (evolve.Factory, error) {
	var fo evolve.ForestOptions
	err := apply(opts, map[string]optionSetter{
		"init":     setInt(&fo.Init),
		"trees":    setInt(&fo.Trees),
		"minleaf":  setInt(&fo.MinLeaf),
		"features": setFloat(&fo.Features),
		"random":   setInt(&fo.Random),
		"starts":   setInt(&fo.Starts),
		// A warm start's prior: πBO's β/τ and the share of candidates
		// drawn from the prior's head; 0 turns each off.
		"prior":     setOff(&fo.Prior),
		"priordraw": setOff(&fo.PriorDraw),
		"targets":   setTargets(&fo.Targets),
	})
	if err != nil {
		return nil, err
	}
	return func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewForest(s, seed, fo) }, nil
}
