package evaluate

import (
	"cmp"
	"math"
	"slices"
)

// Point is a config's time and energy per run.
type Point struct {
	Key         string  `json:"key"`
	TimeMS      float64 `json:"time_ms"`
	EnergyMJ    float64 `json:"energy_mj"`
	Certificate string  `json:"certificate,omitempty"`
}

// Front returns the Pareto front of pts: the points no other point matches
// or beats on both time and energy, fastest first (so energy falls along
// it). Points without energy are left out; of equal points the first key
// in sort order stays.
func Front(pts []Point) []Point {
	var in []Point
	for _, p := range pts {
		if p.EnergyMJ > 0 && p.TimeMS > 0 {
			in = append(in, p)
		}
	}
	slices.SortFunc(in, func(a, b Point) int {
		return cmp.Or(cmp.Compare(a.TimeMS, b.TimeMS), cmp.Compare(a.EnergyMJ, b.EnergyMJ), cmp.Compare(a.Key, b.Key))
	})
	var out []Point
	for _, p := range in {
		if len(out) == 0 || p.EnergyMJ < out[len(out)-1].EnergyMJ {
			out = append(out, p)
		}
	}
	return out
}

// Choose picks from front the point that minimises obj among those at
// most maxSlowdown (a fraction: 0.05 is 5%) slower than the fastest; a
// negative maxSlowdown is no limit. It is false for an empty front.
func Choose(front []Point, obj Objective, maxSlowdown float64) (Point, bool) {
	if len(front) == 0 {
		return Point{}, false
	}
	fastest := front[0].TimeMS
	for _, p := range front {
		fastest = min(fastest, p.TimeMS)
	}
	limit := math.Inf(1)
	if maxSlowdown >= 0 {
		limit = fastest * (1 + maxSlowdown)
	}
	best, bestV := Point{}, math.Inf(1)
	for _, p := range front {
		if p.TimeMS > limit {
			continue
		}
		v, err := obj.Value(p.TimeMS, p.EnergyMJ)
		if err != nil {
			continue
		}
		if v < bestV || (v == bestV && p.TimeMS < best.TimeMS) {
			best, bestV = p, v
		}
	}
	return best, !math.IsInf(bestV, 1)
}
