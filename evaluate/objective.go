package evaluate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Objective is what a job minimises: time (ms), energy (mJ per run), their
// product (edp, energy × delay, mJ·ms) or a weighted sum of time and energy
// in those units.
type Objective struct {
	Kind    string  // "time", "energy", "edp" or "weighted"
	WTime   float64 // weights of a weighted sum; both >= 0, one > 0
	WEnergy float64
}

// TimeObjective is the default objective.
var TimeObjective = Objective{Kind: "time"}

// ParseObjective reads "time", "energy", "edp" or a weighted sum such as
// "0.7*time + 0.3*energy" (a term may leave out its weight, "time + 0.01*energy").
func ParseObjective(s string) (Objective, error) {
	switch t := strings.TrimSpace(s); t {
	case "", "time":
		return TimeObjective, nil
	case "energy", "edp":
		return Objective{Kind: t}, nil
	}
	o := Objective{Kind: "weighted"}
	seen := map[string]bool{}
	for _, term := range splitTerms(s) {
		term = strings.TrimSpace(term)
		w, name := 1.0, term
		if a, b, ok := strings.Cut(term, "*"); ok {
			var err error
			if w, err = strconv.ParseFloat(strings.TrimSpace(a), 64); err != nil || w < 0 || math.IsInf(w, 0) || math.IsNaN(w) {
				return Objective{}, fmt.Errorf("objective %q: weight %q is not a finite number >= 0", s, strings.TrimSpace(a))
			}
			name = strings.TrimSpace(b)
		}
		if seen[name] {
			return Objective{}, fmt.Errorf("objective %q: %s given twice", s, name)
		}
		seen[name] = true
		switch name {
		case "time":
			o.WTime = w
		case "energy":
			o.WEnergy = w
		default:
			return Objective{}, fmt.Errorf("objective %q: term %q: want time, energy, edp or a sum such as 0.7*time + 0.3*energy", s, term)
		}
	}
	if o.WTime == 0 && o.WEnergy == 0 {
		return Objective{}, fmt.Errorf("objective %q: every weight is 0", s)
	}
	return o, nil
}

// splitTerms splits s at each "+" that is not the sign of an exponent
// ("1e+07*energy" is one term: String writes large weights that way).
func splitTerms(s string) []string {
	var terms []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '+' {
			continue
		}
		if i >= 2 && (s[i-1] == 'e' || s[i-1] == 'E') && (s[i-2] >= '0' && s[i-2] <= '9' || s[i-2] == '.') {
			continue
		}
		terms = append(terms, s[start:i])
		start = i + 1
	}
	return append(terms, s[start:])
}

// String is the objective as ParseObjective reads it.
func (o Objective) String() string {
	if o.Kind != "weighted" {
		if o.Kind == "" {
			return "time"
		}
		return o.Kind
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return f(o.WTime) + "*time + " + f(o.WEnergy) + "*energy"
}

// NeedsEnergy reports whether the objective reads energy.
func (o Objective) NeedsEnergy() bool {
	switch o.Kind {
	case "energy", "edp":
		return true
	case "weighted":
		return o.WEnergy > 0
	}
	return false
}

// ErrNoEnergy is returned by Value for an objective that needs energy of a
// trial that has none.
var ErrNoEnergy = errors.New("no energy measurement")

// Value is the objective of a run of timeMS that used energyMJ (0 = not
// measured); lower is better.
func (o Objective) Value(timeMS, energyMJ float64) (float64, error) {
	if o.NeedsEnergy() && !(energyMJ > 0) {
		return 0, ErrNoEnergy
	}
	switch o.Kind {
	case "energy":
		return energyMJ, nil
	case "edp":
		return energyMJ * timeMS, nil
	case "weighted":
		return o.WTime*timeMS + o.WEnergy*energyMJ, nil
	}
	return timeMS, nil
}

// MedianCI is the median of x and the half-width of its 95% confidence
// interval, from the median absolute deviation (robust to the odd slow run
// an OS interruption makes): 1.96 · 1.253 · 1.4826 · MAD / √n, the
// normal-theory standard error of a median with σ estimated by the MAD.
// The half-width is +Inf for fewer than 3 values.
func MedianCI(x []float64) (median, half float64) {
	n := len(x)
	if n == 0 {
		return 0, math.Inf(1)
	}
	median = Median(x)
	if n < 3 {
		return median, math.Inf(1)
	}
	dev := make([]float64, n)
	for i, v := range x {
		dev[i] = math.Abs(v - median)
	}
	mad := Median(dev)
	return median, 1.96 * 1.253 * 1.4826 * mad / math.Sqrt(float64(n))
}

// Median is the median of x (the mean of the middle two for an even
// count); 0 for none.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
