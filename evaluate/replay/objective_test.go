package replay

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
)

// A scalar problem_size (Kernel Tuner writes one for 1-D kernels) is kept.
func TestScalarProblemSize(t *testing.T) {
	t.Parallel()
	data := `{"problem_size": 20000000, "tune_params_keys":["p"],"tune_params":{"p":[1,2]},"cache":{"1":{"p":1,"time":2.5},"2":{"p":2,"time":3}}}`
	rec, err := Parse("vector_add.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.Problem, []int{20000000}) {
		t.Errorf("Problem = %v, want [20000000]", rec.Problem)
	}
	for _, bad := range []string{`-3`, `1.5`, `[4096, "x"]`, `{}`} {
		_, err := Parse("bad.json", []byte(strings.Replace(data, "20000000", bad, 1)))
		if err == nil || !strings.Contains(err.Error(), "bad.json: problem_size: ") {
			t.Errorf("problem_size %s: err = %v, want one naming problem_size", bad, err)
		}
	}
	rec, err = Parse("named.json", []byte(strings.Replace(data, "20000000", `"large"`, 1)))
	if err != nil || rec.Problem != nil {
		t.Errorf("problem_size \"large\": %v, %v; want no size and no error", rec.Problem, err)
	}
}

// Objectives other than time: a score to minimise that goes negative, a
// rate to maximise, a score the file says to maximise.
func TestObjectives(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file string
		maximize   bool
		rule       string
		best       string
		fractions  map[string]float64 // by key: Optimum()/Time
	}{
		{
			name: "negative score, minimised",
			file: `{"objective":"score","tune_params_keys":["p"],"tune_params":{"p":[1,2,3,4]},"cache":{
				"1":{"p":1,"score":-4,"time":2},"2":{"p":2,"score":0,"time":1},"3":{"p":3,"score":6},"4":{"p":4,"score":"RuntimeFailedConfig"}}}`,
			rule: RuleRange, best: "1",
			fractions: map[string]float64{"1": 1, "2": 1 - 0.99*0.4, "3": 0.01},
		},
		{
			name: "rate, maximised by its name",
			file: `{"objective":"GFLOP/s","tune_params_keys":["p"],"tune_params":{"p":[1,2]},"cache":{
				"1":{"p":1,"GFLOP/s":100,"time":3},"2":{"p":2,"GFLOP/s":400,"time":1}}}`,
			maximize: true, rule: RuleInverse, best: "2",
			fractions: map[string]float64{"1": 0.25, "2": 1},
		},
		{
			name: "score the file says to maximise",
			file: `{"objective":"score","objective_higher_is_better":true,"tune_params_keys":["p"],"tune_params":{"p":[1,2,3]},"cache":{
				"1":{"p":1,"score":-1},"2":{"p":2,"score":-3},"3":{"p":3,"score":1}}}`,
			maximize: true, rule: RuleRange, best: "3",
			fractions: map[string]float64{"1": 1 - 0.99*0.5, "2": 0.01, "3": 1},
		},
		{
			name: "T4 score",
			file: `{"schema_version":"1.0.0","results":[
				{"configuration":{"p":1},"times":{"runtimes":[]},"invalidity":"correct","correctness":1,"measurements":[{"name":"score","value":-2,"unit":""}],"objectives":["score"]},
				{"configuration":{"p":2},"times":{"runtimes":[]},"invalidity":"correct","correctness":1,"measurements":[{"name":"score","value":2,"unit":""}],"objectives":["score"]},
				{"configuration":{"p":3},"times":{"runtimes":[]},"invalidity":"compile","correctness":0,"measurements":[{"name":"score","value":"CompilationFailedConfig","unit":""}],"objectives":["score"]}]}`,
			rule: RuleRange, best: "1",
			fractions: map[string]float64{"1": 1, "2": 0.01},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := Parse("o.json", []byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			_, maximize, rule := rec.Objective()
			opt, best := rec.Optimum()
			if maximize != tt.maximize || rule != tt.rule || best != tt.best {
				t.Fatalf("Objective() = maximize %v rule %q, best %q; want %v %q %q", maximize, rule, best, tt.maximize, tt.rule, tt.best)
			}
			for key, want := range tt.fractions {
				tr, _ := rec.Trial(key)
				if got := opt / tr.Time; !tr.OK() || math.Abs(got-want) > 1e-12 || !(tr.Time > 0) {
					t.Errorf("key %s: fraction %v (Time %v), want %v", key, got, tr.Time, want)
				}
				if _, ok := rec.Value(tr); !ok {
					t.Errorf("key %s: Value() not found", key)
				}
			}
		})
	}
	// The objective's own value stays readable, and a missing one is named.
	rec, _ := Parse("o.json", []byte(tests[0].file))
	tr, _ := rec.Trial("1")
	if v, _ := rec.Value(tr); v != -4 || tr.Observables["time"] != 2 {
		t.Errorf("Value = %v, observables %v; want -4 and time 2", v, tr.Observables)
	}
	_, err := Parse("o.json", []byte(`{"objective":"score","tune_params_keys":["p"],"tune_params":{"p":[1]},"cache":{"1":{"p":1,"time":2}}}`))
	if err == nil || !strings.Contains(err.Error(), `o.json: cache["1"]: score: missing (the file's objective)`) {
		t.Errorf("missing objective: %v", err)
	}
}

// A real cache keeps its timing columns, timestamps and extra observables.
func TestCacheKeepsEverything(t *testing.T) {
	t.Parallel()
	rec, err := Load(sharedSpaces(t) + "/gemm_clblast_RTX_3090.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := rec.Trial("16,16,32,8,8,8,8,2,1,1,0,0,0,0,32")
	if !ok {
		t.Fatal("no trial 16,16,32,8,8,8,8,2,1,1,0,0,0,0,32")
	}
	ph := tr.PhasesMS
	if ph["compilation"] != 0.6785109871998429 || ph["validation"] != 267.1127449721098 || ph["benchmark"] != 1479.5833899988793 || tr.Observables["GFLOP/s"] != 2983.8356394313446 {
		t.Errorf("phases %v, observables %v", ph, tr.Observables)
	}
	if tr.At.IsZero() || tr.At.Year() < 2020 || tr.At.Location() != time.UTC {
		t.Errorf("At = %v, want the recorded timestamp", tr.At)
	}
	if _, ok := tr.Observables["time"]; ok {
		t.Errorf("the objective time is also an observable: %v", tr.Observables)
	}
	if tr.Status != evaluate.StatusOK || tr.Time != 46.072413 {
		t.Errorf("trial %s %v", tr.Status, tr.Time)
	}
}
