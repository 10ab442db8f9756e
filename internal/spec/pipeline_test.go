package spec

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParsePipeline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, src string
		want            *Pipeline // nil: want an error
		err             string    // the error's text after "FILE: "
	}{
		{name: "defaults", file: "p.yaml", src: "pipeline: infer\n",
			want: &Pipeline{Name: "infer", BudgetByInfluence: true, Retention: Retention{Spans: DefaultRetainSpans, Batches: DefaultRetainBatches}}},
		{name: "full yaml", file: "p.yaml",
			src:  "pipeline: infer\nkernels: [conv2d, reduce]\nbudget_by_influence: false\nretention: {spans: 5000, batches: 10}\n",
			want: &Pipeline{Name: "infer", Kernels: []string{"conv2d", "reduce"}, Retention: Retention{Spans: 5000, Batches: 10}}},
		{name: "json", file: "p.json", src: `{"pipeline": "train", "kernels": ["sgemm"], "retention": {"spans": 7}}`,
			want: &Pipeline{Name: "train", Kernels: []string{"sgemm"}, BudgetByInfluence: true, Retention: Retention{Spans: 7, Batches: DefaultRetainBatches}}},
		{name: "nulls are defaults", file: "p.yaml", src: "pipeline: a\nkernels: null\nbudget_by_influence: null\nretention: null\n",
			want: &Pipeline{Name: "a", BudgetByInfluence: true, Retention: Retention{Spans: DefaultRetainSpans, Batches: DefaultRetainBatches}}},
		{name: "no name", file: "p.yaml", src: "pipeline: null\nkernels: [a]\n", err: "pipeline: missing (want [A-Za-z0-9_.-]+)"},
		{name: "bad name", file: "p.yaml", src: "pipeline: a/b\n", err: `pipeline "a/b": want [A-Za-z0-9_.-]+ (line 1)`},
		{name: "unknown key", file: "p.yaml", src: "pipeline: a\nname: b\n", err: "name: unknown key (want one of pipeline, kernels, budget_by_influence, retention, zoning) (line 2)"},
		{name: "kernels not a list", file: "p.yaml", src: "pipeline: a\nkernels: sgemm\n", err: `kernels: want a list, got "sgemm" (line 2)`},
		{name: "bad kernel", file: "p.yaml", src: "pipeline: a\nkernels:\n  - sgemm\n  - 'x y'\n", err: `kernels[1] "x y": want [A-Za-z0-9_.-]+ (line 4)`},
		{name: "kernel twice", file: "p.yaml", src: "pipeline: a\nkernels: [x, y, x]\n", err: `kernels[2] "x" is also kernels[0] (line 2)`},
		{name: "bool", file: "p.yaml", src: "pipeline: a\nbudget_by_influence: 1\n", err: "budget_by_influence: want true or false, got 1 (line 2)"},
		{name: "retention key", file: "p.yaml", src: "pipeline: a\nretention: {iterations: 3}\n", err: "retention.iterations: unknown key (want one of spans, batches) (line 2)"},
		{name: "retention zero", file: "p.yaml", src: "pipeline: a\nretention: {spans: 0}\n", err: "retention.spans: 0 out of range (want 1 to 1000000) (line 2)"},
		{name: "retention big", file: "p.json", src: `{"pipeline": "a", "retention": {"batches": 100001}}`, err: "retention.batches: 100001 out of range (want 1 to 100000) (line 1)"},
		{name: "retention float", file: "p.yaml", src: "pipeline: a\nretention: {spans: 1.5}\n", err: "retention.spans: want an integer, got 1.5 (line 2)"},
		{name: "zoning", file: "p.yaml", src: "pipeline: a\nkernels: [conv2d, reduce]\nzoning: {chain: [conv2d, reduce], error_budget: {rel: 1e-3}, inputs: positive}\n",
			want: &Pipeline{Name: "a", Kernels: []string{"conv2d", "reduce"}, BudgetByInfluence: true, Retention: Retention{Spans: DefaultRetainSpans, Batches: DefaultRetainBatches},
				Zoning: &Zoning{Chain: []string{"conv2d", "reduce"}, ErrorBudget: ErrorBudget{Rel: 1e-3}, Inputs: "positive"}}},
		{name: "zoning no chain", file: "p.yaml", src: "pipeline: a\nkernels: [conv2d, reduce]\nzoning: {error_budget: {rel: 1e-3}}\n", err: "zoning.chain: missing (want the kernels in data-flow order, e.g. [conv2d, reduce])"},
		{name: "zoning chain length", file: "p.yaml", src: "pipeline: a\nkernels: [conv2d, reduce]\nzoning: {chain: [conv2d], error_budget: {rel: 1e-3}}\n", err: "zoning.chain: 1 kernels: want 2 (a kernel and the reduce it feeds) (line 3)"},
		{name: "zoning kernel not listed", file: "p.yaml", src: "pipeline: a\nkernels: [conv2d, reduce]\nzoning: {chain: [sgemm, reduce], error_budget: {rel: 1e-3}}\n", err: `zoning.chain[0] "sgemm" is not one of kernels [conv2d reduce] (line 3)`},
		{name: "zoning kernel twice", file: "p.yaml", src: "pipeline: a\nkernels: [conv2d, reduce]\nzoning: {chain: [reduce, reduce], error_budget: {rel: 1e-3}}\n", err: `zoning.chain[1] "reduce" is in the chain twice (line 3)`},
		{name: "zoning no budget", file: "p.yaml", src: "pipeline: a\nkernels: [conv2d, reduce]\nzoning: {chain: [conv2d, reduce]}\n", err: "zoning.error_budget: missing (want {rel: X} or {abs: X})"},
		{name: "zoning ulp", file: "p.yaml", src: "pipeline: a\nkernels: [conv2d, reduce]\nzoning: {chain: [conv2d, reduce], error_budget: {ulp: 4}}\n", err: "zoning.error_budget.ulp: a chain's budget is rel or abs (line 3)"},
		{name: "zoning budget zero", file: "p.yaml", src: "pipeline: a\nkernels: [conv2d, reduce]\nzoning: {chain: [conv2d, reduce], error_budget: {rel: 0}}\n", err: "zoning.error_budget.rel: 0.0: want a number > 0 (line 3)"},
		{name: "zoning inputs", file: "p.yaml", src: "pipeline: a\nkernels: [conv2d, reduce]\nzoning: {chain: [conv2d, reduce], error_budget: {rel: 1e-3}, inputs: odd}\n", err: `zoning.inputs "odd": want signed or positive (line 3)`},
		{name: "zoning key", file: "p.yaml", src: "pipeline: a\nkernels: [conv2d, reduce]\nzoning: {chain: [conv2d, reduce], error_budget: {rel: 1e-3}, seeds: 3}\n", err: "zoning.seeds: unknown key (want one of chain, error_budget, inputs) (line 3)"},
		{name: "not a map", file: "p.yaml", src: "- pipeline\n", err: `want a mapping of pipeline keys, got ["pipeline"] (line 1)`},
		{name: "extension", file: "p.txt", src: "pipeline: a\n", err: `unknown file type ".txt" (want .yaml, .yml or .json)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("/k", tt.file)
			p, err := ParsePipeline(path, []byte(tt.src))
			if tt.want == nil {
				if err == nil {
					t.Fatalf("ParsePipeline(%q) = %+v, want error %q", tt.src, p, tt.err)
				}
				if !errors.Is(err, ErrInvalid) || !IsFieldError(err) {
					t.Errorf("ParsePipeline(%q) error %v is not a FieldError matching ErrInvalid", tt.src, err)
				}
				if got, want := err.Error(), path+": "+tt.err; got != want {
					t.Errorf("ParsePipeline(%q) error\n got %s\nwant %s", tt.src, got, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePipeline(%q): %v", tt.src, err)
			}
			if p.Source != path || string(p.Raw) != tt.src {
				t.Errorf("Source, Raw = %q, %q", p.Source, p.Raw)
			}
			p.Source, p.Raw = "", nil
			if !reflect.DeepEqual(p, tt.want) {
				t.Errorf("ParsePipeline(%q) = %+v, want %+v", tt.src, p, tt.want)
			}
		})
	}
}

// TestParseRefusesPipeline: Parse, which reads kernel specs, names a
// pipeline file as such instead of complaining about its keys.
func TestParseRefusesPipeline(t *testing.T) {
	t.Parallel()
	_, err := Parse("/k/p.yaml", []byte("pipeline: a\nkernels: [sgemm]\n"))
	if err == nil || err.Error() != "/k/p.yaml: pipeline: this file declares a pipeline, not a kernel spec (line 1)" {
		t.Errorf("Parse(pipeline file) error = %v", err)
	}
}

func TestLoadPipelines(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"a.yaml":      "name: a\nevaluator: builtin:sgemm\n",
		"p1.yaml":     "pipeline: infer\nkernels: [a]\n",
		"p2.json":     `{"pipeline": "train", "budget_by_influence": false}`,
		"p3.yaml":     "pipeline: infer\n",
		"p4.yaml":     "pipeline: bad\nretention: {spans: -1}\n",
		"x.T1.json":   `{"pipeline": "not read as one", "ConfigurationSpace": {"TuningParameters": [{"Name": "a", "Type": "int", "Values": "[1, 2]"}]}}`,
		".p5.yaml":    "pipeline: hidden\n",
		"p6.yaml.bak": "pipeline: backup\n",
	})
	d, errs := Load(dir)
	var specs, pipes []string
	for _, s := range d.Specs {
		specs = append(specs, s.Name)
	}
	for _, p := range d.Pipelines {
		pipes = append(pipes, p.Name)
		if want := filepath.Join(dir, "p"); !strings.HasPrefix(p.Source, want) {
			t.Errorf("pipeline %s: Source %q", p.Name, p.Source)
		}
	}
	if got, want := strings.Join(specs, " "), "a x"; got != want {
		t.Errorf("Load specs = %q, want %q", got, want)
	}
	if got, want := strings.Join(pipes, " "), "infer train"; got != want {
		t.Errorf("Load pipelines = %q, want %q", got, want)
	}
	if len(errs) != 0 {
		t.Errorf("Load errors = %v, want none (the kernel specs load)", errs)
	}
	errs = d.PipelineErrs
	if len(errs) != 2 {
		t.Fatalf("Load pipeline errors = %v, want p3 (duplicate) and p4 (retention)", errs)
	}
	if msg := errs[0].Error(); !strings.HasPrefix(msg, filepath.Join(dir, "p3.yaml")+`: pipeline "infer" already defined in `) || !errors.Is(errs[0], ErrDuplicatePipeline) {
		t.Errorf("Load error = %q, want p3.yaml's duplicate", msg)
	}
	if msg := errs[1].Error(); !strings.HasPrefix(msg, filepath.Join(dir, "p4.yaml")+": retention.spans: -1 out of range") {
		t.Errorf("Load error = %q, want p4.yaml's retention.spans", msg)
	}
	// LoadDir, the kernel specs' loader, is unchanged by pipeline files:
	// the same specs and errors, none of them about the pipelines.
	specsOnly, errs2 := LoadDir(dir)
	if len(specsOnly) != 2 || len(errs2) != 0 {
		t.Errorf("LoadDir = %d specs, errors %v", len(specsOnly), errs2)
	}
}
