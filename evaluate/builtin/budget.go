package builtin

import (
	"maps"
	"math"
	"slices"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// budgetAcc accumulates the error-budget check over cases: per element,
// the a-priori bound and the measured error in the budget's units.
type budgetAcc struct {
	b       evaluate.ErrorBudget
	noModel bool
	any     bool

	bound, measured float64
	at              string
	stages          []evaluate.StageBound
}

// inUnits converts an absolute error x at an element whose reference is
// ref to the budget's units: rel divides by max(|ref|, the case's mean
// |ref|, the smallest normal float32), as the rel tolerance does; abs by
// the case's output scale; ulp by float32's spacing at ref.
func (a *budgetAcc) inUnits(x, ref, scale, outScale float64) float64 {
	switch a.b.Kind {
	case evaluate.ToleranceAbs:
		return x / outScale
	case evaluate.ToleranceULP:
		return x / spacing32(ref)
	}
	return x / max(math.Abs(ref), scale, minNormal32)
}

// spacing32 is the distance from |x| rounded to float32 to the next
// float32 up.
func spacing32(x float64) float64 {
	f := float32(math.Abs(x))
	if math.IsInf(float64(f), 0) {
		return math.Inf(1)
	}
	return float64(math.Nextafter32(f, float32(math.Inf(1))) - f)
}

func (a *budgetAcc) add(cs vcase, got []float32, ref, abs []float64, m errorModel, cols int) {
	if a.b.IsZero() {
		return
	}
	if len(got) != len(ref) || len(abs) != len(ref) {
		a.any = true
		a.bound, a.measured = math.Inf(1), math.Inf(1)
		a.at = cs.name + ": output length differs from the reference"
		return
	}
	scale := 0.0
	for _, w := range ref {
		scale += math.Abs(w)
	}
	scale /= max(float64(len(ref)), 1)
	for i, g := range got {
		var e float64
		if a.b.Kind == evaluate.ToleranceULP {
			e = ulpDist(g, float32(ref[i]))
		} else {
			e = a.inUnits(math.Abs(float64(g)-ref[i]), ref[i], scale, cs.outScale)
		}
		if math.IsNaN(e) {
			e = math.Inf(1)
		}
		bd := m.bound(ref[i], abs[i])
		bu := a.inUnits(bd, ref[i], scale, cs.outScale)
		if a.b.Kind == evaluate.ToleranceULP {
			bu++ // the reference's own rounding to float32, and a binade edge
		}
		if math.IsNaN(bu) {
			bu = math.Inf(1)
		}
		a.measured = max(a.measured, e)
		if !a.any || bu > a.bound {
			a.bound, a.at = bu, where(cs.name, i, cols)
			if m.stages != nil {
				a.stages = m.stages(ref[i], abs[i])
			} else {
				a.stages = []evaluate.StageBound{{Stage: precision.StageAccumulation.String(), Value: "fp32", Bound: bd, How: m.formula}}
			}
		}
		a.any = true
	}
}

// result is the budget check of config vals; prec names the kernel's
// precision parameters.
func (a *budgetAcc) result(vals map[string]genome.Value, prec map[string]precision.Stage) evaluate.BudgetResult {
	if a.b.IsZero() {
		return evaluate.BudgetResult{}
	}
	r := evaluate.BudgetResult{Kind: a.b.Kind, Value: a.b.Value, Map: map[string]string{}}
	for _, name := range slices.Sorted(maps.Keys(prec)) {
		r.Map[name] = vals[name].String()
	}
	if a.noModel {
		r.NotChecked = "no a-priori error bound for this kernel"
		return r
	}
	if !a.any {
		r.NotChecked = "no output was checked"
		return r
	}
	r.Stages = slices.Clone(a.stages)
	r.Bound, r.Measured, r.At = a.bound, a.measured, a.at
	r.Passed = a.bound <= a.b.Value && a.measured <= a.b.Value
	return r
}
