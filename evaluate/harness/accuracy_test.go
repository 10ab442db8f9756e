package harness

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/precision"
)

// A param that declares a precision stage must name a stage and list
// format names of it, most accurate first; the error names the param.
func TestHelloPrecision(t *testing.T) {
	t.Parallel()
	hello := func(p string) Hello {
		var m Hello
		if err := json.Unmarshal([]byte(`{"type":"hello","protocol":1,"name":"x","params":[{"name":"tile","values":[8,16]},`+p+`]}`), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	h := &Harness{hello: hello(`{"name":"b_storage","values":["fp32","fp16","fp8_e4m3"],"precision":"input"}`)}
	if _, err := params(h.hello); err != nil {
		t.Fatal(err)
	}
	if got := h.Precision(); len(got) != 1 || got["b_storage"] != precision.StageInput {
		t.Errorf("Precision() = %v, want b_storage: input", got)
	}
	for p, want := range map[string]string{
		`{"name":"s","values":["fp32","fp16"],"precision":"storage"}`:        `params[1] (s).precision: precision stage "storage"`,
		`{"name":"s","values":["fp16","fp32"],"precision":"input"}`:          `params[1] (s).values: input precision "fp32": listed after the less accurate "fp16"`,
		`{"name":"s","values":["fp32",16],"precision":"input"}`:              `params[1] (s).values[1] 16: a precision parameter's values are format names`,
		`{"name":"s","values":["fp32","fp33"],"precision":"input"}`:          `params[1] (s).values: input precision "fp33": want one of`,
		`{"name":"acc","values":["fp32","int8"],"precision":"accumulation"}`: `params[1] (acc).values: accumulator "int8"`,
	} {
		_, err := params(hello(p))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", p, err, want)
		}
	}
}

// The budget is checked on the largest bound and measured error the
// verify runs report, and fails, unchecked, when any run reports none, of
// another kind, or a number that is no error.
func TestBudgetFromAccuracy(t *testing.T) {
	t.Parallel()
	h := &Harness{hello: Hello{Params: []Param{{Name: "n"}, {Name: "b_storage", Precision: "input"}}}}
	bud := evaluate.ErrorBudget{Kind: evaluate.ToleranceRel, Value: 1e-2}
	cfg := map[string]any{"n": 1, "b_storage": "fp16"}
	acc := func(m, b float64) *Accuracy {
		return &Accuracy{Kind: "rel", Measured: m, Bound: b, Stages: []AccuracyStage{{Stage: "input", Param: "b_storage", Value: "fp16", Bound: b}}}
	}
	r := h.budget(bud, cfg, []*Accuracy{acc(1e-3, 9e-3), acc(2e-3, 8e-3)})
	if !r.Passed || r.Bound != 9e-3 || r.Measured != 2e-3 || r.Map["b_storage"] != "fp16" || len(r.Stages) != 1 || r.NotChecked != "" {
		t.Errorf("within the budget: %+v", r)
	}
	if r := h.budget(bud, cfg, []*Accuracy{acc(1e-3, 9e-3), acc(1e-3, 1.2e-2)}); r.Passed || r.Bound != 1.2e-2 {
		t.Errorf("a bound over the budget: %+v", r)
	}
	if r := h.budget(bud, cfg, []*Accuracy{acc(1.1e-2, 9e-3)}); r.Passed || r.Measured != 1.1e-2 {
		t.Errorf("a measured error over the budget: %+v", r)
	}
	for name, accs := range map[string][]*Accuracy{
		"none":     {acc(1e-3, 9e-3), nil},
		"kind":     {{Kind: "abs", Measured: 1e-3, Bound: 1e-3}},
		"negative": {{Kind: "rel", Measured: -1, Bound: 1e-3}},
		"nan":      {{Kind: "rel", Measured: 1e-3, Bound: math.NaN()}},
		"stage":    {{Kind: "rel", Measured: 1e-3, Bound: 1e-3, Stages: []AccuracyStage{{Stage: "input", Bound: -1}}}},
		"no runs":  nil,
	} {
		if r := h.budget(bud, cfg, accs); r.Passed || r.NotChecked == "" {
			t.Errorf("%s: %+v, want not checked", name, r)
		}
	}
}
