package spec

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzParse checks that Parse never panics, and that whatever it accepts
// has a hash and a canonical form that parses back to the same hash.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, filepath.Ext(p) == ".json")
		}
	}
	for _, s := range []string{
		"name: k\nevaluator: builtin:sgemm\nschedule: TZ=UTC\n",
		"name: k\nevaluator: replay:x.json\nproblems: {a: '1,2', b: [3, 4]}\nconstraints: ['a <']\n",
		"a: &a [*a]\n",
		"name: k\nevaluator: builtin:reduce\nparameters: {unroll: [.inf]}\ndefault: {unroll: 1e400}\n",
		"name: k\nevaluator: builtin:sgemm\ntune_on_miss: true\non_miss: {max_problem: 1024x1024x1024, max_volume: 1e9}\n",
		"name: k\nevaluator: builtin:reduce\nprecision: {acc: accumulation, input: input}\nparameters: {input: [half, int4]}\nverify: {error_budget: {ulp: 3}}\n",
	} {
		f.Add([]byte(s), false)
	}
	for _, s := range []string{
		`{"ConfigurationSpace": {"TuningParameters": [{"Name": "a", "Type": "int", "Values": "[1, 2]"}]}}`,
		`{"name": "k", "evaluator": "builtin:sgemm", "budget": {"evals": 1e3}}`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`,
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		path := "/k/spec.yaml"
		if isJSON {
			path = "/k/spec.json"
		}
		s, err := Parse(path, data)
		if err != nil {
			return
		}
		if len(s.Hash) != 16 {
			t.Fatalf("Hash = %q", s.Hash)
		}
		if s.T1 != nil || s.OpenCL != nil {
			return // their canonical forms record a file's content, not a spec
		}
		back, err := Parse("/k/canonical.json", s.Canonical())
		if err != nil {
			t.Fatalf("canonical %s does not parse: %v", s.Canonical(), err)
		}
		if back.Hash != s.Hash {
			t.Fatalf("canonical %s parses to hash %s, want %s", s.Canonical(), back.Hash, s.Hash)
		}
	})
}

// FuzzParseOpenCL parses opencl specs and OpenCL T1 files beside a real
// kernel source: never a panic, every error a FieldError, and what is
// accepted compiles.
func FuzzParseOpenCL(f *testing.F) {
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "saxpy.cl"), []byte(openclSource), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "k.T1.json"), []byte(saxpyT1(hotspotArgs, `[]`)), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(openclSpec), false)
	f.Add([]byte(saxpyT1(saxpyArgs, `[]`)), true)
	f.Add([]byte(saxpyT1(hotspotArgs, `["-std=c++11"]`)), true)
	f.Add([]byte("name: x\nevaluator: opencl\nt1: k.T1.json\nopencl:\n  args:\n    - {name: y, type: float, size: \"4096\", output: true}\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		path := filepath.Join(dir, "spec.yaml")
		if isJSON {
			path = filepath.Join(dir, "spec.T1.json")
		}
		s, err := Parse(path, data)
		if err != nil {
			if !IsFieldError(err) {
				t.Fatalf("error %v is not a FieldError", err)
			}
			return
		}
		if s.OpenCL != nil {
			if _, err := s.OpenCL.Compile(); err != nil {
				t.Fatalf("accepted a kernel that does not compile: %v", err)
			}
		}
	})
}

// FuzzParsePipeline checks that ParsePipeline never panics and that what
// it accepts is within its documented bounds.
func FuzzParsePipeline(f *testing.F) {
	for _, s := range []string{
		"pipeline: infer\nkernels: [conv2d, reduce]\nbudget_by_influence: false\nretention: {spans: 5000, batches: 10}\n",
		"pipeline: a\nkernels: [x, x]\n",
		"pipeline: a\nretention: {spans: 1e400}\n",
		"pipeline: &a [*a]\n",
		"pipeline: z\nkernels: [conv2d, reduce]\nzoning: {chain: [conv2d, reduce], error_budget: {rel: 1e-3}, inputs: positive}\n",
		"pipeline: z\nkernels: [a, b]\nzoning: {chain: [b, a], error_budget: {abs: 2, rel: 1}}\n",
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(`{"pipeline": "train", "kernels": ["sgemm"], "retention": {"spans": 7}}`), true)
	f.Add([]byte(`{"pipeline": "t", "kernels": [null]}`), true)
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		path := "/k/p.yaml"
		if isJSON {
			path = "/k/p.json"
		}
		p, err := ParsePipeline(path, data)
		if err != nil {
			if !IsFieldError(err) {
				t.Fatalf("error %v is not a FieldError", err)
			}
			return
		}
		if validName(p.Name) != nil {
			t.Fatalf("accepted name %q", p.Name)
		}
		for _, k := range p.Kernels {
			if validName(k) != nil {
				t.Fatalf("accepted kernel %q", k)
			}
		}
		if z := p.Zoning; z != nil {
			if len(z.Chain) != ZoningChainLen || z.Chain[0] == z.Chain[1] {
				t.Fatalf("accepted chain %v", z.Chain)
			}
			for _, k := range z.Chain {
				if !slices.Contains(p.Kernels, k) {
					t.Fatalf("chain kernel %q not in kernels %v", k, p.Kernels)
				}
			}
			if b := z.ErrorBudget.Settings(); !(b.Value > 0) || b.Kind == "ulp" {
				t.Fatalf("accepted budget %+v", z.ErrorBudget)
			}
		}
		if r := p.Retention; r.Spans < 1 || r.Spans > MaxRetainSpans || r.Batches < 1 || r.Batches > MaxRetainBatches {
			t.Fatalf("retention %+v out of bounds", r)
		}
	})
}
