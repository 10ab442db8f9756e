package precision

import "fmt"

// Composed is the bound of a stage fed by an upstream stage, split into
// the upstream's error as it reaches the output (Upstream) and the
// stage's own error on the values it received (Own).
type Composed struct{ Upstream, Own float64 }

// Total is the whole bound.
func (c Composed) Total() float64 { return c.Upstream + c.Own }

// ThroughLinear composes the bound of a linear stage y = Σ c_i·x_i whose
// inputs arrive computed upstream, x̃_i within up_i of the exact x_i, and
// whose own error on the x̃_i it received (storage, accumulation, output
// rounding: a bound made from Σ|c_i·x̃_i|, which the stage sees) is at
// most own:
//
//	|ŷ - y| <= |ŷ - Σc_i·x̃_i| + |Σc_i·(x̃_i - x_i)| <= own + Σ|c_i|·up_i
//
// A nil coef is all ones (a sum): the upstream error passes through
// unamplified. The error names a length mismatch or a negative or NaN
// bound.
func ThroughLinear(coef, up []float64, own float64) (Composed, error) {
	if coef != nil && len(coef) != len(up) {
		return Composed{}, fmt.Errorf("precision: %d coefficients for %d upstream bounds", len(coef), len(up))
	}
	if !(own >= 0) {
		return Composed{}, fmt.Errorf("precision: own bound %v: want >= 0", own)
	}
	s := 0.0
	for i, u := range up {
		if !(u >= 0) {
			return Composed{}, fmt.Errorf("precision: upstream bound %d is %v: want >= 0", i, u)
		}
		c := 1.0
		if coef != nil {
			c = coef[i]
			if c < 0 {
				c = -c
			}
		}
		s += c * u
	}
	return Composed{Upstream: s, Own: own}, nil
}
