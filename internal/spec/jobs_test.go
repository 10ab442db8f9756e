package spec

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/genome"
)

func TestJobsBuiltin(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "sgemm.yaml", `
name: sgemm
evaluator: builtin:sgemm
problems: ["64,64,64"]
parameters:
  tile_m: [64, 32]
  loop_order: [ikj]
  pack_b: [false]
constraints:
  - tile_m * tile_n <= m * 32
default: {tile_n: 32}
`)
	jobs, err := s.Jobs()
	if err != nil {
		t.Fatalf("Jobs() = %v", err)
	}
	if len(jobs) != 1 {
		t.Fatalf("Jobs() gave %d jobs, want 1", len(jobs))
	}
	j := jobs[0]
	if j.Spec != s {
		t.Error("Job.Spec is not the spec")
	}
	want := evaluate.Problem{Name: "64,64,64", Dims: []int{64, 64, 64}, Names: []string{"m", "n", "k"}}
	if j.Problem.Name != want.Name || !slices.Equal(j.Problem.Dims, want.Dims) || !slices.Equal(j.Problem.Names, want.Names) {
		t.Errorf("Problem = %+v, want %+v", j.Problem, want)
	}
	if _, ok := j.Evaluator.(*builtin.Kernel); !ok {
		t.Errorf("Evaluator = %T, want *builtin.Kernel", j.Evaluator)
	}
	all := j.Space.All()
	if len(all) == 0 {
		t.Fatal("narrowed space is empty")
	}
	base, err := j.Evaluator.Space(j.Problem)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) >= base.Size() {
		t.Errorf("narrowed space has %d configs, the evaluator's %d", len(all), base.Size())
	}
	for _, c := range all {
		m := j.Space.Map(c)
		if tm := m["tile_m"].I; tm != 32 && tm != 64 {
			t.Fatalf("config %s: tile_m %d, want 32 or 64", j.Space.Key(c), tm)
		}
		if m["loop_order"].S != "ikj" || m["pack_b"].Truth() {
			t.Fatalf("config %s: outside the narrowing", j.Space.Key(c))
		}
		if m["tile_m"].I*m["tile_n"].I > 64*32 {
			t.Fatalf("config %s: violates the spec's constraint", j.Space.Key(c))
		}
		if !base.Valid(c) {
			t.Fatalf("config %s: not valid in the evaluator's space", j.Space.Key(c))
		}
	}
	// tile_m's and loop_order's defaults (16, ijk) were narrowed away: the
	// default is the nearest valid config, with tile_n from the spec.
	if got, want := j.Space.Key(j.Default), "32,32,16,1,1,False,ikj,fp32"; got != want {
		t.Errorf("Default = %s, want %s", got, want)
	}
	if !j.Space.Valid(j.Default) {
		t.Errorf("Default %s is not valid", j.Space.Key(j.Default))
	}
}

func TestJobsBuiltinDefaultProblems(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "r.yaml", "name: r\nevaluator: builtin:reduce\n")
	jobs, err := s.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	k, _ := builtin.New("reduce", builtin.Options{})
	if len(jobs) != len(k.DefaultProblems()) {
		t.Fatalf("%d jobs, want one per default problem (%d)", len(jobs), len(k.DefaultProblems()))
	}
	for i, j := range jobs {
		if j.Evaluator != jobs[0].Evaluator {
			t.Error("jobs do not share one evaluator")
		}
		if j.Problem.Name != k.DefaultProblems()[i].String() {
			t.Errorf("job %d: problem %q, want %q", i, j.Problem.Name, k.DefaultProblems()[i].String())
		}
		if !j.Default.Equal(j.Space.Default()) {
			t.Errorf("job %d: Default %v, want the space's default", i, j.Default)
		}
	}
}

// replaySpec writes small_cache.json and a spec using it by a relative
// path into a temp dir, and parses the spec.
func replaySpec(t *testing.T, extra string) *Spec {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile("../../evaluate/replay/testdata/small_cache.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "caches"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "caches", "small_cache.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "small.yaml")
	src := "name: small\nevaluator: replay:caches/small_cache.json\n" + extra
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Parse(path, []byte(src))
	if err != nil {
		t.Fatalf("Parse(%q) = %v", src, err)
	}
	if want := "replay:" + filepath.Join(dir, "caches", "small_cache.json"); s.Evaluator != want {
		t.Fatalf("Evaluator = %q, want %q", s.Evaluator, want)
	}
	return s
}

func TestJobsReplay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		extra    string
		size     int
		dims     []string
		defaults string
	}{
		{"recorded problem", "", 5, nil, "16,0.5,a"},
		{"same problem listed", "problems: ['64,64']\n", 5, nil, "16,0.5,a"},
		{"named dims in a constraint", "problem_dims: [w, h]\nconstraints: ['bx < w']\n", 3, []string{"w", "h"}, "16,0.5,a"},
		{"narrowed", "parameters: {mode: [b]}\n", 3, nil, "16,1.0,b"},
		{"narrowed float by int", "parameters: {f: [1]}\n", 2, nil, "16,1.0,b"},
		{"default", "default: {bx: 32}\n", 5, nil, "32,0.5,a"},
		{"default not recorded, nearest", "default: {bx: 64}\n", 5, nil, "64,0.5,b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := replaySpec(t, tt.extra)
			jobs, err := s.Jobs()
			if err != nil {
				t.Fatalf("Jobs() = %v", err)
			}
			if len(jobs) != 1 {
				t.Fatalf("%d jobs, want 1", len(jobs))
			}
			j := jobs[0]
			if _, ok := j.Evaluator.(*replay.Recording); !ok {
				t.Errorf("Evaluator = %T, want *replay.Recording", j.Evaluator)
			}
			if j.Problem.Name != "64,64" || !slices.Equal(j.Problem.Dims, []int{64, 64}) || !slices.Equal(j.Problem.Names, tt.dims) {
				t.Errorf("Problem = %+v, want 64,64 named %v", j.Problem, tt.dims)
			}
			if got := j.Space.Size(); got != tt.size {
				t.Errorf("Space.Size() = %d, want %d", got, tt.size)
			}
			if got := j.Space.Key(j.Default); got != tt.defaults {
				t.Errorf("Default = %s, want %s", got, tt.defaults)
			}
		})
	}
}

func TestJobsErrors(t *testing.T) {
	t.Parallel()
	const sgemm = "name: k\nevaluator: builtin:sgemm\nproblems: ['64,64,64']\n"
	tests := []struct {
		name   string
		replay bool // the spec uses small_cache.json
		src    string
		want   []string
	}{
		{"default violates constraints", false, sgemm + "constraints: [tile_m >= 32]\ndefault: {tile_m: 16}\n",
			[]string{"default: no valid config has tile_m = 16: ", `violates constraint`, "tile_m >= 32"}},
		{"default violates the kernel", false, sgemm + "default: {workers: 8}\n",
			[]string{"default: ", "violates constraint"}},
		{"empty space", false, sgemm + "constraints: ['tile_m > m']\n",
			[]string{"problems[0]: problem 64,64,64: no valid config is left"}},
		{"problem the kernel cannot run", false, "name: k\nevaluator: builtin:conv2d\nproblems: ['4,4,9']\n",
			[]string{"problems[0]: problem 4,4,9: ", "unknown problem"}},
		{"replay problem", true, "problems: ['32,32']\n",
			[]string{"problems[0]: problem 32,32: the recording small_cache holds problem 64,64"}},
		{"replay narrowing value", true, "parameters: {bx: [16, 48]}\n",
			[]string{"parameters.bx: 48 is not a value of bx (have 16, 32, 64)"}},
		{"replay narrowing param", true, "parameters: {by: [16]}\n",
			[]string{"parameters.by: no such parameter of replay:", "(have bx, f, mode)"}},
		{"replay default param", true, "default: {nope: 1}\n",
			[]string{"default.nope: no such parameter"}},
		{"replay default not recorded", true, "default: {bx: 64, f: 0.5, mode: a}\n",
			[]string{`default: no valid config has bx = 64, f = 0.5, mode = "a": `, "not in the recorded domain"}},
		{"replay constraint name", true, "constraints: ['by < 4']\n",
			[]string{`constraints[0]: expression "by < 4": column 1: unknown name "by"`}},
		{"replay problem_dims count", true, "problem_dims: [n]\n",
			[]string{"problem_dims: 1 names for the recording's problem 64,64"}},
		{"replay problem_dims clash", true, "problem_dims: [bx, h]\n",
			[]string{`problem_dims "bx" is also a parameter`}},
		{"replay missing file", false, "name: k\nevaluator: replay:missing.json\n",
			[]string{`evaluator "replay:`, "missing.json", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s *Spec
			if tt.replay {
				s = replaySpec(t, tt.src)
			} else {
				s = mustParse(t, filepath.Join(t.TempDir(), "k.yaml"), tt.src)
			}
			_, err := s.Jobs()
			if err == nil {
				t.Fatalf("Jobs() = nil error, want %q", tt.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, s.Source+": ") {
				t.Errorf("Jobs() = %q, want it to start with the file %q", msg, s.Source)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Jobs() = %q, want it to contain %q", msg, w)
				}
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Jobs() = %v, want it to match ErrInvalid", err)
			}
		})
	}
}

// kernelsDir holds the FAIR T1 files of the shared spaces.
const kernelsDir = "../../../shared/spaces/kernels"

func TestT1(t *testing.T) {
	t.Parallel()
	path := filepath.Join(kernelsDir, "convolution_milo.T1.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is absent: the shared spaces folder is not checked out beside the project", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(path, data)
	if err != nil {
		t.Fatalf("Parse(%s) = %v", path, err)
	}
	if s.Name != "convolution_milo" || s.Evaluator != "" || s.T1 == nil || s.Schedule != DefaultSchedule {
		t.Errorf("Parse(%s) = name %q evaluator %q T1 %v schedule %q", path, s.Name, s.Evaluator, s.T1 != nil, s.Schedule)
	}
	if len(s.Problems) != 1 || s.Problems[0].Name != "4096,4096" {
		t.Errorf("Problems = %+v, want 4096,4096", s.Problems)
	}
	jobs, err := s.Jobs()
	if err != nil {
		t.Fatalf("Jobs() = %v", err)
	}
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(jobs))
	}
	j := jobs[0]
	if j.Evaluator != nil {
		t.Errorf("Evaluator = %T, want nil", j.Evaluator)
	}
	if got := j.Space.Size(); got != 4362 {
		t.Errorf("Space.Size() = %d, want 4362", got)
	}
	if !j.Space.Valid(j.Default) {
		t.Errorf("Default %s is not valid", j.Space.Key(j.Default))
	}

	// The same T1 file under another name, reformatted, is the same spec;
	// *.T1.json is not needed to tell it is a T1 file.
	dir := t.TempDir()
	var compact strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		compact.WriteString(strings.TrimSpace(line))
	}
	other := filepath.Join(dir, "conv.json")
	if err := os.WriteFile(other, []byte(compact.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	specs, errs := LoadDir(dir)
	if len(errs) != 0 || len(specs) != 1 {
		t.Fatalf("LoadDir = %d specs, errors %v", len(specs), errs)
	}
	if specs[0].Hash != s.Hash || specs[0].Name != s.Name {
		t.Errorf("reformatted T1: name %q hash %s, want %q %s", specs[0].Name, specs[0].Hash, s.Name, s.Hash)
	}
}

func TestT1WithoutEvaluatorOrProblem(t *testing.T) {
	t.Parallel()
	src := `{"ConfigurationSpace": {"TuningParameters": [
		{"Name": "a", "Type": "int", "Values": "[1, 2, 4]", "Default": 2},
		{"Name": "s", "Type": "string", "Values": ["x", "y"]}],
		"Conditions": [{"Expression": "a > 1 or s == 'y'"}]}}`
	s := mustParse(t, "/k/tiny.T1.json", src)
	if s.Name != "tiny" || s.Problems != nil {
		t.Errorf("Name %q Problems %v, want tiny and none", s.Name, s.Problems)
	}
	jobs, err := s.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	j := jobs[0]
	if len(jobs) != 1 || j.Evaluator != nil || len(j.Problem.Dims) != 0 || j.Space.Size() != 5 {
		t.Errorf("Jobs() = %+v", jobs)
	}
	if got := j.Space.Map(j.Default); !got["a"].Equal(genome.Int(2)) {
		t.Errorf("Default = %v, want a = 2", got)
	}
}
