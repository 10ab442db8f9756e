package harness

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// Accuracy is what a harness answers about its own output on a verify run
// of a job with an error budget (the request's error_kind): its error
// against its own high-precision reference, and an a-priori bound on it,
// both in the budget's units (kind). quasimd cannot see the output, so the
// budget is checked on the harness's word, as the checksum is.
type Accuracy struct {
	Kind     string  `json:"kind"`     // abs | rel | ulp: the error_kind asked for
	Measured float64 `json:"measured"` // largest error over the output, against the reference
	Bound    float64 `json:"bound"`    // largest a-priori bound over the output
	// Reference says what the output was compared with (e.g. "float64
	// matmul of the same inputs").
	Reference string `json:"reference,omitempty"`
	// Stages, optional: each precision stage's share of Bound.
	Stages []AccuracyStage `json:"stages,omitempty"`
}

// AccuracyStage is one stage's share of an Accuracy's bound.
type AccuracyStage struct {
	Stage   string  `json:"stage"`
	Param   string  `json:"param,omitempty"`
	Value   string  `json:"value,omitempty"`
	Bound   float64 `json:"bound"`
	Formula string  `json:"formula,omitempty"`
}

// checkPrecision checks params[i], turned into gp, where it declares a
// precision stage: a known stage, string values that are its format
// names, most accurate first.
func checkPrecision(i int, p Param, gp genome.Param) error {
	if p.Precision == "" {
		return nil
	}
	st, err := precision.ParseStage(p.Precision)
	if err != nil {
		return fmt.Errorf("params[%d] (%s).precision: %w", i, p.Name, err)
	}
	vals := make([]string, len(gp.Values))
	for j, v := range gp.Values {
		if v.Kind != genome.KindString {
			return fmt.Errorf("params[%d] (%s).values[%d] %s: a precision parameter's values are format names (%s)", i, p.Name, j, v, st)
		}
		vals[j] = v.S
	}
	if err := st.CheckOrder(vals); err != nil {
		return fmt.Errorf("params[%d] (%s).values: %w", i, p.Name, err)
	}
	return nil
}

// Precision is the harness's precision parameters and their stages, as its
// hello declares them (the spec package picks it up as a builtin kernel's).
func (h *Harness) Precision() map[string]precision.Stage {
	out := map[string]precision.Stage{}
	for _, p := range h.hello.Params {
		if st, err := precision.ParseStage(p.Precision); p.Precision != "" && err == nil {
			out[p.Name] = st
		}
	}
	return out
}

// checkAccuracy says what is wrong with a verify run's accuracy answer to
// a request for kind, or "" when it can be used.
func checkAccuracy(a *Accuracy, kind string) string {
	switch {
	case a == nil:
		return "the harness reported no accuracy for a verify run with error_kind " + kind
	case a.Kind != kind:
		return fmt.Sprintf("the harness reported accuracy of kind %q, asked for %q", a.Kind, kind)
	case !(a.Measured >= 0) || math.IsInf(a.Measured, 0):
		return fmt.Sprintf("the harness reported a measured error of %v", a.Measured)
	case !(a.Bound >= 0) || math.IsInf(a.Bound, 0):
		return fmt.Sprintf("the harness reported an error bound of %v", a.Bound)
	}
	for i, s := range a.Stages {
		if !(s.Bound >= 0) || math.IsInf(s.Bound, 0) {
			return fmt.Sprintf("the harness reported accuracy.stages[%d] (%s) bound %v", i, s.Stage, s.Bound)
		}
	}
	return ""
}

// budget is the error-budget check of config cfg from the accuracy
// answers of its verify runs (nil where a run answered none): the
// largest bound and measured error over them, within b.Value to pass.
func (h *Harness) budget(b evaluate.ErrorBudget, cfg map[string]any, accs []*Accuracy) evaluate.BudgetResult {
	r := evaluate.BudgetResult{Kind: b.Kind, Value: b.Value, Map: map[string]string{}}
	for _, name := range slices.Sorted(maps.Keys(h.Precision())) {
		r.Map[name] = fmt.Sprint(cfg[name])
	}
	if len(accs) == 0 {
		r.NotChecked = "no verify run answered"
		return r
	}
	for i, a := range accs {
		if note := checkAccuracy(a, b.Kind); note != "" {
			r.NotChecked = fmt.Sprintf("verify run %d: %s", i+1, note)
			return r
		}
		if i == 0 || a.Bound > r.Bound {
			r.Bound = a.Bound
			r.Stages = r.Stages[:0]
			for _, s := range a.Stages {
				r.Stages = append(r.Stages, evaluate.StageBound{Stage: s.Stage, Param: s.Param, Value: s.Value, Bound: s.Bound, How: s.Formula})
			}
		}
		r.Measured = max(r.Measured, a.Measured)
		r.At = "the harness's output, against " + cmp.Or(a.Reference, "its own reference")
	}
	if len(r.Stages) == 0 {
		r.Stages = nil
	}
	r.Passed = r.Bound <= b.Value && r.Measured <= b.Value
	return r
}
