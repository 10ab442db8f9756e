package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/precision"
)

const reduceYAML = "name: r\nevaluator: builtin:reduce\nproblems: ['100000']\n"

func TestPrecisionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      []string
	}{
		{"unknown format", reduceYAML + "parameters: {input: [fp32, fp17]}\n", []string{"a.yaml: parameters.input", `"fp17": want one of fp32, fp16, bf16, int8, fp8_e4m3, int4`, "line 4"}},
		{"int accumulator", reduceYAML + "parameters: {acc: [int8]}\n", []string{"parameters.acc", `accumulator "int8": want one of fp64, kahan, fp32, fp16, bf16`}},
		{"format in default", reduceYAML + "default: {input: fp9}\n", []string{"default.input", `"fp9"`}},
		{"unknown stage", reduceYAML + "precision: {input: storage}\n", []string{"precision.input", `stage "storage"`}},
		{"not a precision parameter", reduceYAML + "precision: {block: input}\n", []string{"precision.block", `"block" is not a precision parameter of builtin:reduce (have acc, input)`}},
		{"wrong stage", reduceYAML + "precision: {acc: input}\n", []string{"precision.acc", "acc sets the accumulation precision of builtin:reduce, not input"}},
		{"budget two kinds", reduceYAML + "verify: {error_budget: {rel: 1e-5, abs: 1}}\n", []string{"verify.error_budget", "exactly one of abs, rel or ulp, got 2"}},
		{"budget zero", reduceYAML + "verify: {error_budget: {rel: 0}}\n", []string{"verify.error_budget.rel", "want a number > 0"}},
		{"budget unknown kind", reduceYAML + "verify: {error_budget: {relative: 1e-5}}\n", []string{"verify.error_budget", "relative: unknown key"}},
		{"inputs", reduceYAML + "verify: {inputs: negative}\n", []string{"verify.inputs", `"negative": want signed or positive`}},
		{"budget not a number", reduceYAML + "verify: {error_budget: {rel: tight}}\n", []string{"verify.error_budget.rel", "want a finite number"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("a.yaml", []byte(tt.src))
			if err == nil {
				t.Fatalf("Parse succeeded, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Parse = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestPrecisionNarrowing checks that precision values match by rank (fp32
// names reduce's float32 accumulator, half its fp16 input), that a job
// without a budget keeps its precision parameters at fp32 or better, and
// that a budget opens the reduced formats to the search.
func TestPrecisionNarrowing(t *testing.T) {
	t.Parallel()
	values := func(src, param string) []string {
		t.Helper()
		s := mustParse(t, "a.yaml", src)
		jobs, err := s.Jobs()
		if err != nil {
			t.Fatal(err)
		}
		sp := jobs[0].Space
		seen := map[string]bool{}
		var out []string
		for _, c := range sp.All() {
			v := sp.Map(c)[param].S
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		return out
	}
	tests := []struct {
		name, src, param string
		want             []string
	}{
		{"no budget: input", reduceYAML, "input", []string{"fp32"}},
		{"no budget: acc", reduceYAML, "acc", []string{"float64", "kahan", "float32"}},
		{"budget: input", reduceYAML + "verify: {error_budget: {rel: 1e-3}}\n", "input", []string{"fp32", "fp16", "bf16", "int8", "fp8_e4m3", "int4"}},
		{"budget: acc", reduceYAML + "verify: {error_budget: {rel: 1e-3}}\n", "acc", []string{"float64", "kahan", "float32", "fp16", "bf16"}},
		{"narrowed by alias", reduceYAML + "parameters: {acc: [fp32, fp64], input: [half]}\n", "acc", []string{"float64", "float32"}},
		{"narrowed input kept", reduceYAML + "parameters: {input: [half, bf16]}\n", "input", []string{"fp16", "bf16"}},
		{"sgemm no budget", "name: g\nevaluator: builtin:sgemm\nproblems: ['64,64,64']\n", "b_input", []string{"fp32"}},
		{"conv2d no budget", "name: c\nevaluator: builtin:conv2d\nproblems: ['64,64,5']\n", "input", []string{"fp32"}},
		{"conv2d budget", "name: c\nevaluator: builtin:conv2d\nproblems: ['64,64,5']\nverify: {error_budget: {rel: 1e-3}}\n", "input", []string{"fp32", "fp16", "bf16", "int8", "fp8_e4m3", "int4"}},
		{"sgemm budget", "name: g\nevaluator: builtin:sgemm\nproblems: ['64,64,64']\nverify: {error_budget: {abs: 1e-2}}\n", "b_input", []string{"fp32", "fp16", "bf16", "int8", "fp8_e4m3", "int4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := values(tt.src, tt.param)
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("%s values = %q, want %q (in this order)", tt.param, got, tt.want)
			}
		})
	}
	// A default named by an alias of a narrowed value.
	s := mustParse(t, "a.yaml", reduceYAML+"parameters: {acc: [fp32, fp64]}\ndefault: {acc: fp64}\n")
	jobs, err := s.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	if g := jobs[0].Space.Map(jobs[0].Default)["acc"].S; g != "float64" {
		t.Errorf("default acc = %q, want float64", g)
	}
}

func TestErrorBudgetHashAndSettings(t *testing.T) {
	t.Parallel()
	plain := mustParse(t, "a.yaml", reduceYAML)
	b5 := mustParse(t, "a.yaml", reduceYAML+"verify: {error_budget: {rel: 1e-5}}\n")
	b5json := mustParse(t, "a.json", `{"name": "r", "evaluator": "builtin:reduce", "problems": ["100000"], "verify": {"error_budget": {"rel": 0.00001}}}`)
	b3 := mustParse(t, "a.yaml", reduceYAML+"verify: {error_budget: {rel: 1e-3}}\n")
	if plain.Hash == b5.Hash || b5.Hash == b3.Hash {
		t.Errorf("hashes %s %s %s: a budget must change the hash", plain.Hash, b5.Hash, b3.Hash)
	}
	if b5.Hash != b5json.Hash {
		t.Errorf("YAML %s and JSON %s of one budget hash differently", b5.Hash, b5json.Hash)
	}
	if !strings.Contains(string(b5.Canonical()), `"error_budget":{"rel":0.00001}`) && !strings.Contains(string(b5.Canonical()), `"error_budget":{"rel":1e-05}`) {
		t.Errorf("canonical %s lacks the budget", b5.Canonical())
	}
	if g := b5.Verify.ErrorBudget.Settings(); g != (evaluate.ErrorBudget{Kind: "rel", Value: 1e-5}) {
		t.Errorf("Settings = %+v", g)
	}
	// The canonical JSON parses back to the same spec.
	again := mustParse(t, "b.json", string(b5.Canonical()))
	if again.Hash != b5.Hash {
		t.Errorf("canonical JSON parses to hash %s, want %s", again.Hash, b5.Hash)
	}
	// A declared precision section is hashed too.
	decl := mustParse(t, "a.yaml", reduceYAML+"precision: {acc: accumulation}\n")
	if decl.Hash == plain.Hash || decl.Precision["acc"] != precision.StageAccumulation {
		t.Errorf("precision section: hash %s (plain %s), %v", decl.Hash, plain.Hash, decl.Precision)
	}
	if again := mustParse(t, "b.json", string(decl.Canonical())); again.Hash != decl.Hash {
		t.Errorf("canonical JSON with precision parses to hash %s, want %s", again.Hash, decl.Hash)
	}
}

// precisionRecording writes a Kernel Tuner cache whose parameter prec
// has the given values and a spec replaying it with extra lines.
func precisionRecording(t *testing.T, values []string, extra string) *Spec {
	t.Helper()
	dir := t.TempDir()
	cache := `{"device_name": "GPU", "kernel_name": "k", "problem_size": [64], "tune_params_keys": ["bx", "prec"],
 "tune_params": {"bx": [16, 32], "prec": ["` + strings.Join(values, `", "`) + `"]}, "cache": {`
	for i, v := range values {
		if i > 0 {
			cache += ","
		}
		cache += `"16,` + v + `": {"bx": 16, "prec": "` + v + `", "time": ` + []string{"3.0", "2.0", "1.0"}[i%3] + `}`
	}
	cache += "}}"
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(cache), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "k.yaml")
	return mustParse(t, path, "name: k\nevaluator: replay:c.json\n"+extra)
}

// TestPrecisionDeclared: a spec declares a precision parameter of an
// evaluator that knows nothing of precision; its values must name formats
// of the stage, most accurate first, and then match by format.
func TestPrecisionDeclared(t *testing.T) {
	t.Parallel()
	s := precisionRecording(t, []string{"fp32", "bf16", "int8"}, "precision: {prec: input}\nparameters: {prec: [float32, int8]}\n")
	jobs, err := s.Jobs()
	if err != nil {
		t.Fatalf("Jobs() = %v", err)
	}
	var got []string
	for _, c := range jobs[0].Space.All() {
		got = append(got, jobs[0].Space.Map(c)["prec"].S)
	}
	if strings.Join(got, ",") != "fp32,int8" {
		t.Errorf("values %q, want fp32 and int8 (float32 names fp32)", got)
	}
	for _, tt := range []struct {
		name   string
		values []string
		extra  string
		want   string
	}{
		{"not in order", []string{"fp16", "fp32"}, "precision: {prec: input}\n", `precision.prec: prec of replay:`},
		{"not a format", []string{"fp32", "fp24"}, "precision: {prec: input}\n", `input precision "fp24": want one of`},
		{"not a string", nil, "precision: {bx: input}\n", "precision.bx: bx's value 16 is not the name of a format (input stage)"},
		{"no such parameter", []string{"fp32"}, "precision: {nope: output}\n", "precision.nope: no such parameter"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vals := tt.values
			if vals == nil {
				vals = []string{"fp32"}
			}
			_, err := precisionRecording(t, vals, tt.extra).Jobs()
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "k.yaml") {
				t.Errorf("Jobs() = %v, want an error naming k.yaml and containing %q", err, tt.want)
			}
		})
	}
}
