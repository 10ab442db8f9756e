package genome

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// NearestBudget bounds the nodes one Nearest search visits on a space that
// is not listed; past it the best config found so far is returned.
const NearestBudget = 1 << 18

// Nearest returns the valid config c that minimises Σ_i cost(i, c[i]) among
// those accept allows (nil accept allows all), and false when there is none.
// cost(i, j) is the cost of value index j for parameter i and must be ≥ 0;
// +Inf rules a value out. Ties go to a uniformly random one of the tied
// configs when rng is not nil, else, on a listed space, to the first in All order.
//
// On a listed space (Enumerable) it scans All. On a larger one it is a
// branch and bound over the parameters in order: values in order of cost,
// each constraint checked as soon as its last parameter is bound, prefixes
// with no valid completion cut by the counted tree when the space has one,
// and a prefix dropped once its cost plus the least cost of the parameters
// still free exceeds the best found. It visits at most NearestBudget nodes
// and then returns the best found so far, which may not be the nearest
// (and may miss a config accept allows when almost none are); ties found
// are broken at random among those visited.
func (s *Space) Nearest(rng *rand.Rand, cost func(i, j int) float64, accept func(Config) bool) (Config, bool) {
	if s.Enumerable() {
		return s.nearestListed(rng, cost, accept)
	}
	return s.nearestTree(rng, cost, accept)
}

func (s *Space) nearestListed(rng *rand.Rand, cost func(i, j int) float64, accept func(Config) bool) (Config, bool) {
	best, ties := -1, 0
	bestD := math.Inf(1)
	all := s.All()
	for i, v := range all {
		d := 0.0
		for p, j := range v {
			if d += cost(p, j); d > bestD {
				break
			}
		}
		if d > bestD || math.IsInf(d, 1) || (accept != nil && !accept(v)) {
			continue
		}
		switch {
		case d < bestD:
			best, bestD, ties = i, d, 1
		case rng != nil:
			ties++
			if rng.IntN(ties) == 0 {
				best = i
			}
		}
	}
	if best < 0 {
		return nil, false
	}
	return all[best].Clone(), true
}

type nearestSearch struct {
	s      *Space
	t      *tree // nil when the space cannot be counted
	rng    *rand.Rand
	cost   func(i, j int) float64
	accept func(Config) bool
	params []int       // params[d]: the parameter bound at depth d
	byLast [][]*Expr   // per depth: the constraints checked there
	order  [][]int     // per param: value indices by cost, +Inf ones left out
	rest   []float64   // rest[d]: Σ over depths >= d of the least cost of the parameter
	costs  [][]float64 // per param, per value
	cur    Config
	env    []Value
	best   Config
	bestD  float64
	ties   int
	nodes  int
}

func (s *Space) nearestTree(rng *rand.Rand, cost func(i, j int) float64, accept func(Config) bool) (Config, bool) {
	n := len(s.params)
	ns := &nearestSearch{s: s, rng: rng, cost: cost, accept: accept, bestD: math.Inf(1),
		order: make([][]int, n), rest: make([]float64, n+1), costs: make([][]float64, n),
		cur: make(Config, n), env: s.env(s.Default())}
	if t, err := s.tree(); err == nil {
		ns.t = t
		if t.total == 0 {
			return nil, false
		}
		ns.params, ns.byLast = t.order, t.byLast
	} else {
		var always []*Expr
		ns.byLast, always = s.constraintsByLast()
		for _, e := range always {
			if ok, err := e.Truth(ns.env); err != nil || !ok {
				return nil, false
			}
		}
		for p := range n {
			ns.params = append(ns.params, p)
		}
	}
	for i, p := range s.params {
		ns.costs[i] = make([]float64, len(p.Values))
		for j := range p.Values {
			c := cost(i, j)
			ns.costs[i][j] = c
			if !math.IsInf(c, 1) {
				ns.order[i] = append(ns.order[i], j)
			}
		}
		slices.SortStableFunc(ns.order[i], func(a, b int) int { return cmp.Compare(ns.costs[i][a], ns.costs[i][b]) })
	}
	for d := n - 1; d >= 0; d-- {
		least, p := math.Inf(1), ns.params[d]
		if len(ns.order[p]) > 0 {
			least = ns.costs[p][ns.order[p][0]]
		}
		ns.rest[d] = ns.rest[d+1] + least
	}
	if math.IsInf(ns.rest[0], 1) {
		return nil, false
	}
	ns.walk(0, 0)
	if ns.best == nil {
		return nil, false
	}
	return ns.best, true
}

func (ns *nearestSearch) walk(d int, partial float64) {
	if d == len(ns.cur) {
		if ns.accept != nil && !ns.accept(ns.cur) {
			return
		}
		switch {
		case partial < ns.bestD:
			ns.best, ns.bestD, ns.ties = ns.cur.Clone(), partial, 1
		case partial == ns.bestD && ns.rng != nil:
			ns.ties++
			if ns.rng.IntN(ns.ties) == 0 {
				ns.best = ns.cur.Clone()
			}
		}
		return
	}
	q := ns.params[d]
	for _, j := range ns.order[q] {
		if ns.nodes >= NearestBudget {
			return
		}
		p := partial + ns.costs[q][j]
		if p+ns.rest[d+1] > ns.bestD {
			return // values are in order of cost: the rest cost more
		}
		ns.nodes++
		ns.cur[q] = j
		ns.env[q] = ns.s.params[q].Values[j]
		ok := true
		for _, e := range ns.byLast[d] {
			if v, err := e.Truth(ns.env); err != nil || !v {
				ok = false
				break
			}
		}
		if !ok || (ns.t != nil && !ns.t.alive(d+1, ns.cur)) {
			continue
		}
		ns.walk(d+1, p)
	}
}
