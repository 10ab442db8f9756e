package evolve

import (
	"fmt"
	"math"
	"slices"
)

// What model-based strategies fit to the results.
const (
	// TargetsLog is the log of each value: a model of ratios, which is
	// what a time's spread means when it is a few times the optimum.
	TargetsLog = "log"
	// TargetsRank is each value's normal score, Φ⁻¹((rank+½)/n) over the
	// valid results (ties share their mean rank): the fit sees the order
	// alone, so a device whose slow configs are a hundred times the
	// optimum, where the log's squared error is spent on the slow tail,
	// reads like one whose spread is two.
	TargetsRank = "rank"
)

// CheckTargets reports whether name is a kind of targets ("" is the default).
func CheckTargets(name string) error {
	if name != "" && name != TargetsLog && name != TargetsRank {
		return fmt.Errorf("want %s or %s, not %q", TargetsLog, TargetsRank, name)
	}
	return nil
}

// FitTargets returns the targets of kind (TargetsLog when "") for told, a
// failed result at the worst valid target plus one either way.
func FitTargets(told []Result, kind string) []float64 {
	if kind != TargetsRank {
		return LogTargets(told)
	}
	var valid []int
	for i, r := range told {
		if r.OK {
			valid = append(valid, i)
		}
	}
	slices.SortStableFunc(valid, func(a, b int) int { return cmpFloat(told[a].Value, told[b].Value) })
	y := make([]float64, len(told))
	worst := 0.0
	n := float64(len(valid))
	for lo := 0; lo < len(valid); {
		hi := lo + 1
		for hi < len(valid) && told[valid[hi]].Value == told[valid[lo]].Value {
			hi++
		}
		// Ranks lo..hi-1 tie: each takes their mean, (lo+hi-1)/2.
		q := (float64(lo+hi-1)/2 + 0.5) / n
		z := math.Sqrt2 * math.Erfinv(2*q-1)
		for _, i := range valid[lo:hi] {
			y[i] = z
		}
		worst = z
		lo = hi
	}
	for i, r := range told {
		if !r.OK {
			y[i] = worst + 1
		}
	}
	return y
}
