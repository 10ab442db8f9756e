package spec

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/genome"
)

func mustParse(t *testing.T, path, src string) *Spec {
	t.Helper()
	s, err := Parse(path, []byte(src))
	if err != nil {
		t.Fatalf("Parse(%q) = %v", path, err)
	}
	return s
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withoutFile returns s without the fields that differ between two files of
// the same meaning.
func withoutFile(s *Spec) Spec {
	c := *s
	c.Raw, c.Source = nil, ""
	return c
}

func TestParseYAMLAndJSONAgree(t *testing.T) {
	t.Parallel()
	y, err := Parse("testdata/full.yaml", readTestdata(t, "full.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	j, err := Parse("testdata/full.json", readTestdata(t, "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	if y.Hash != j.Hash {
		t.Errorf("hash: YAML %s, JSON %s", y.Hash, j.Hash)
	}
	if a, b := withoutFile(y), withoutFile(j); !reflect.DeepEqual(a, b) {
		t.Errorf("YAML and JSON specs differ:\n%+v\n%+v", a, b)
	}
	want := Spec{
		Name:      "sgemm-small",
		Evaluator: "builtin:sgemm",
		Objective: "time",
		Schedule:  "@every 6h",
		Budget:    Budget{Evals: 40, Seconds: 120},
		Problems: []evaluate.Problem{
			{Name: "64,64,64", Dims: []int{64, 64, 64}, Names: []string{"m", "n", "k"}},
			{Name: "128,128,128", Dims: []int{128, 128, 128}, Names: []string{"m", "n", "k"}},
		},
		ProblemDims: []string{"m", "n", "k"},
		Params: map[string][]genome.Value{
			"tile_m":     {genome.Int(32), genome.Int(16)},
			"loop_order": {genome.Str("ikj"), genome.Str("ijk")},
			"pack_b":     {genome.Bool(true)},
		},
		Constraints: []string{"tile_m * tile_n <= 4096", "workers <= 4"},
		Default:     map[string]genome.Value{"tile_m": genome.Int(32), "loop_order": genome.Str("ikj")},
		Verify:      Verify{Tolerance: "rel", Value: 1e-5, Repeats: 3, Nondeterministic: "reject"},
		TuneOnMiss:  true,
	}
	got := withoutFile(y)
	got.Hash = ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse(full.yaml) =\n%+v\nwant\n%+v", got, want)
	}
	if len(y.Hash) != 16 {
		t.Errorf("Hash = %q, want 16 hex digits", y.Hash)
	}
	abs, _ := filepath.Abs("testdata/full.yaml")
	if y.Source != abs {
		t.Errorf("Source = %q, want %q", y.Source, abs)
	}
	if string(y.Raw) != string(readTestdata(t, "full.yaml")) {
		t.Error("Raw is not the file's bytes")
	}
}

func TestHash(t *testing.T) {
	t.Parallel()
	const base = `
name: k
evaluator: builtin:sgemm
parameters: {tile_m: [16, 32]}
budget: {evals: 10}
`
	same := map[string]string{
		"comments and spacing": `
# a comment
name:    k   # trailing
evaluator: "builtin:sgemm"

parameters:
  tile_m:
    - 16
    - 32
budget:
  evals: 10
`,
		"key order": `
budget: {evals: 10}
parameters: {tile_m: [16, 32]}
evaluator: builtin:sgemm
name: k
`,
		"value order": `
name: k
evaluator: builtin:sgemm
parameters: {tile_m: [32, 16]}
budget: {evals: 10}
`,
		"defaults written out": `
name: k
evaluator: builtin:sgemm
objective: time
schedule: "@every 6h"
problems:
  - 128,128,128
  - "256,256,256"
  - [384, 256, 320]
problem_dims: [m, n, k]
parameters: {tile_m: [16, 32]}
budget: {evals: 10, seconds: 0}
tune_on_miss: false
verify: null
`,
	}
	different := map[string]string{
		"budget evals":   strings.Replace(base, "evals: 10", "evals: 11", 1),
		"budget seconds": strings.Replace(base, "evals: 10", "evals: 10, seconds: 5", 1),
		"narrowing":      strings.Replace(base, "[16, 32]", "[16, 64]", 1),
		"name":           strings.Replace(base, "name: k", "name: k2", 1),
		"problem":        base + "problems: ['64,64,64']\n",
		"schedule":       base + "schedule: '@hourly'\n",
		"default":        base + "default: {tile_m: 32}\n",
		"constraint":     base + "constraints: [tile_n <= 32]\n",
		"verify":         base + "verify: {repeats: 2}\n",
		"tune_on_miss":   base + "tune_on_miss: true\n",
	}
	h := mustParse(t, "k.yaml", base).Hash
	for name, src := range same {
		if got := mustParse(t, "k.yaml", src).Hash; got != h {
			t.Errorf("%s: Hash = %s, want %s as the base spec", name, got, h)
		}
	}
	seen := map[string]string{h: "base"}
	for name, src := range different {
		got := mustParse(t, "k.yaml", src).Hash
		if other, dup := seen[got]; dup {
			t.Errorf("%s: Hash = %s, the same as %s", name, got, other)
		}
		seen[got] = name
	}
	// The canonical JSON is itself a spec with the same hash.
	s := mustParse(t, "k.yaml", base+"verify: {tolerance: ulp, value: 2}\ndefault: {loop_order: ikj}\n")
	back := mustParse(t, "k.json", string(s.Canonical()))
	if back.Hash != s.Hash {
		t.Errorf("canonical JSON %s parses to hash %s, want %s", s.Canonical(), back.Hash, s.Hash)
	}
}

func TestDefaultsFilled(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "min.yaml", "name: min\nevaluator: builtin:sgemm\n")
	if s.Objective != "time" || s.Schedule != "@every 6h" || s.Budget != (Budget{Evals: 60}) {
		t.Errorf("defaults: objective %q schedule %q budget %+v", s.Objective, s.Schedule, s.Budget)
	}
	if s.Params != nil || s.Default != nil || s.Constraints != nil || s.TuneOnMiss || s.Verify != (Verify{}) {
		t.Errorf("optional fields set: %+v", s)
	}
	k, err := builtin.New("sgemm", builtin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range k.DefaultProblems() {
		want = append(want, p.String())
	}
	var got []string
	for _, p := range s.Problems {
		got = append(got, p.Name)
		if !slices.Equal(p.Names, []string{"m", "n", "k"}) {
			t.Errorf("problem %s: Names = %v, want m n k", p.Name, p.Names)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Problems = %v, want %v", got, want)
	}

	r := mustParse(t, "/specs/r.yaml", "name: r\nevaluator: replay:caches/x.json.gz\nschedule: '*/5 * * * *'\nbudget: {seconds: 30}\n")
	if r.Evaluator != "replay:/specs/caches/x.json.gz" {
		t.Errorf("Evaluator = %q, want the path made absolute", r.Evaluator)
	}
	if r.Problems != nil || r.Budget != (Budget{Evals: 60, Seconds: 30}) {
		t.Errorf("replay spec: Problems %v, Budget %+v", r.Problems, r.Budget)
	}
	if _, err := r.CronSchedule(); err != nil {
		t.Errorf("CronSchedule() = %v", err)
	}
	only := mustParse(t, "o.yaml", "name: o\nevaluator: builtin:reduce\nbudget: {evals: 0, seconds: 10}\n")
	if only.Budget != (Budget{Seconds: 10}) {
		t.Errorf("Budget = %+v, want evals 0, seconds 10", only.Budget)
	}
}

func TestProblemsForms(t *testing.T) {
	t.Parallel()
	list := mustParse(t, "a.yaml", "name: a\nevaluator: replay:x.json\nproblems: ['2,3', [4, 5], 6x7]\n")
	mapped := mustParse(t, "b.json", `{"name": "a", "evaluator": "replay:x.json", "problems": {"z": "6,7", "a": [2, 3], "m": "4, 5"}}`)
	var got []string
	for _, p := range list.Problems {
		got = append(got, p.Name)
	}
	if want := []string{"2,3", "4,5", "6,7"}; !slices.Equal(got, want) {
		t.Errorf("list problems = %v, want %v", got, want)
	}
	got = got[:0]
	for _, p := range mapped.Problems {
		got = append(got, p.Name)
	}
	if want := []string{"2,3", "4,5", "6,7"}; !slices.Equal(got, want) {
		t.Errorf("map problems = %v, want %v (in name order)", got, want)
	}
}

func TestCronSchedule(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "c.yaml", "name: c\nevaluator: builtin:reduce\nschedule: '30 2 * * *'\n")
	sched, err := s.CronSchedule()
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2025, 1, 1, 0, 0, 0, 0, time.Local)
	if got, want := sched.Next(from), time.Date(2025, 1, 1, 2, 30, 0, 0, time.Local); !got.Equal(want) {
		t.Errorf("Next(%v) = %v, want %v", from, got, want)
	}
	bad := &Spec{Name: "x", Source: "/x.yaml", Schedule: "TZ=UTC"}
	if _, err := bad.CronSchedule(); err == nil || !strings.Contains(err.Error(), "/x.yaml: schedule") {
		t.Errorf("CronSchedule(TZ=UTC) = %v, want an error naming file and field", err)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	const ok = "name: k\nevaluator: builtin:sgemm\n"
	tests := []struct {
		name string
		file string
		src  string
		want []string // substrings of the error after "FILE: "
	}{
		{"malformed yaml", "a.yaml", "name: k\nevaluator: [builtin:sgemm\nschedule: x\n", []string{"line ", "did not find expected"}},
		{"yaml tab", "a.yaml", "name: k\n\tevaluator: x\n", []string{"line 2"}},
		{"malformed json", "a.json", "{\n  \"name\": \"k\",\n  \"evaluator\" \"builtin:sgemm\"\n}", []string{"line 3, column 15", "invalid character"}},
		{"truncated json", "a.json", `{"name": "k"`, []string{"unexpected end"}},
		{"json trailing data", "a.json", `{"name": "k"} {}`, []string{"after the top-level value"}},
		{"empty", "a.yaml", "", []string{"empty file"}},
		{"empty json", "a.json", "  \n", []string{"empty file"}},
		{"two documents", "a.yaml", ok + "---\nname: j\n", []string{"second YAML document"}},
		{"not a mapping", "a.yaml", "- a\n- b\n", []string{"want a mapping"}},
		{"bad extension", "a.txt", ok, []string{`unknown file type ".txt"`}},
		{"unknown key", "a.yaml", ok + "scheduel: '@hourly'\n", []string{"scheduel: unknown key", "line 3"}},
		{"unknown json key", "a.json", `{"name": "k", "evaluator": "builtin:sgemm", "Budget": {}}`, []string{"Budget: unknown key"}},
		{"duplicate key", "a.yaml", ok + "name: j\n", []string{`key "name" already defined at line 1`}},
		{"duplicate json key", "a.json", `{"name": "k", "name": "j"}`, []string{`key "name" already defined`}},
		{"missing name", "a.yaml", "evaluator: builtin:sgemm\n", []string{"name: missing"}},
		{"null name", "a.yaml", "name: null\nevaluator: builtin:sgemm\n", []string{"name: missing"}},
		{"bad name", "a.yaml", "name: a b\nevaluator: builtin:sgemm\n", []string{`name "a b": want [A-Za-z0-9_.-]+`}},
		{"dots name", "a.yaml", "name: '..'\nevaluator: builtin:sgemm\n", []string{`name ".."`}},
		{"list name", "a.yaml", "name: [a]\nevaluator: builtin:sgemm\n", []string{`name: want a string, got ["a"]`}},
		{"missing evaluator", "a.yaml", "name: k\n", []string{"evaluator: missing"}},
		{"unknown evaluator kind", "a.yaml", "name: k\nevaluator: gpu:x\n", []string{`evaluator "gpu:x": unknown kind "gpu"`}},
		{"evaluator without kind", "a.yaml", "name: k\nevaluator: sgemm\n", []string{`evaluator "sgemm": unknown kind`}},
		{"unknown builtin", "a.yaml", "name: k\nevaluator: builtin:nope\n", []string{`evaluator "builtin:nope": unknown builtin kernel (have conv2d, reduce, sgemm)`}},
		{"empty replay", "a.yaml", "name: k\nevaluator: 'replay:'\n", []string{"evaluator ", "no file"}},
		{"objective speed", "a.yaml", ok + "objective: speed\n", []string{`objective "speed": term "speed": want time, energy, edp`}},
		{"objective zero weights", "a.yaml", ok + "objective: 0*time + 0*energy\n", []string{`objective "0*time + 0*energy": every weight is 0`}},
		{"cron words", "a.yaml", ok + "schedule: every day\n", []string{`schedule "every day": expected exactly 5 fields`}},
		{"cron range", "a.yaml", ok + "schedule: '61 * * * *'\n", []string{`schedule "61 * * * *": `, "above maximum"}},
		{"cron tz only", "a.yaml", ok + "schedule: TZ=UTC\n", []string{`schedule "TZ=UTC"`}},
		{"cron empty", "a.yaml", ok + "schedule: ''\n", []string{`schedule "": empty spec`}},
		{"bad constraint", "a.yaml", ok + "constraints:\n  - tile_m <= 64\n  - tile_m +\n", []string{`constraints[1]: expression "tile_m +": column`, "line 5"}},
		{"constraint unknown name", "a.yaml", ok + "constraints: [tile_x < 4]\n", []string{`constraints[0]: expression "tile_x < 4": column 1: unknown name "tile_x"`}},
		{"constraint replay syntax", "a.yaml", "name: k\nevaluator: replay:x.json\nconstraints: ['a <']\n", []string{"constraints[0]: ", "column 4"}},
		{"empty constraint", "a.yaml", ok + "constraints: ['  ']\n", []string{"constraints[0]: empty expression"}},
		{"constraints not a list", "a.yaml", ok + "constraints: tile_m < 4\n", []string{"constraints: want a list"}},
		{"narrowing unknown value", "a.yaml", ok + "parameters: {tile_m: [32, 33]}\n", []string{"parameters.tile_m: 33 is not a value of tile_m (have 16, 32, 64, 128)"}},
		{"narrowing unknown string", "a.yaml", ok + "parameters: {loop_order: [kji]}\n", []string{`parameters.loop_order "kji" is not a value`}},
		{"narrowing unknown param", "a.yaml", ok + "parameters: {tile_x: [32]}\n", []string{"parameters.tile_x: no such parameter of builtin:sgemm (have tile_m, tile_n"}},
		{"narrowing empty", "a.yaml", ok + "parameters: {tile_m: []}\n", []string{"parameters.tile_m: empty list"}},
		{"narrowing twice", "a.yaml", ok + "parameters: {tile_m: [32, 32]}\n", []string{"parameters.tile_m: value 32 listed twice"}},
		{"narrowing nan", "a.yaml", ok + "parameters: {tile_m: [.nan]}\n", []string{"parameters.tile_m: want a finite number"}},
		{"default unknown param", "a.yaml", ok + "default: {nope: 1}\n", []string{"default.nope: no such parameter of builtin:sgemm"}},
		{"default unknown value", "a.yaml", ok + "default: {unroll: 3}\n", []string{"default.unroll: 3 is not a value of unroll"}},
		{"default outside narrowing", "a.yaml", ok + "parameters: {unroll: [1, 2]}\ndefault: {unroll: 4}\n", []string{"default.unroll: 4 is not among parameters.unroll"}},
		{"default not a map", "a.yaml", ok + "default: [1]\n", []string{"default: want a mapping"}},
		{"negative evals", "a.yaml", ok + "budget: {evals: -1}\n", []string{"budget.evals: -1 out of range"}},
		{"negative seconds", "a.yaml", ok + "budget: {seconds: -2.5}\n", []string{"budget.seconds: -2.5 is negative"}},
		{"string evals", "a.yaml", ok + "budget:\n  evals: lots\n", []string{`budget.evals: want an integer, got "lots" (line 4)`}},
		{"zero budget", "a.yaml", ok + "budget: {evals: 0}\n", []string{"budget: evals and seconds are both 0"}},
		{"unknown budget key", "a.yaml", ok + "budget: {evalz: 3}\n", []string{"budget.evalz: unknown key"}},
		{"verify tolerance", "a.yaml", ok + "verify: {tolerance: percent}\n", []string{`verify.tolerance "percent": want abs or rel or ulp`}},
		{"verify value", "a.yaml", ok + "verify: {value: -1e-3}\n", []string{"verify.value: -0.001 is negative"}},
		{"verify repeats", "a.yaml", ok + "verify: {repeats: -3}\n", []string{"verify.repeats: -3 out of range"}},
		{"verify nondeterministic", "a.yaml", ok + "verify: {nondeterministic: ignore}\n", []string{`verify.nondeterministic "ignore": want reject or certify`}},
		{"verify unknown key", "a.yaml", ok + "verify: {tol: abs}\n", []string{"verify.tol: unknown key"}},
		{"tune_on_miss", "a.yaml", ok + "tune_on_miss: sometimes\n", []string{`tune_on_miss: want true or false, got "sometimes"`}},
		{"bad problem", "a.yaml", ok + "problems: ['64,x,64']\n", []string{`problems[0]: problem "64,x,64": want integers`}},
		{"zero dim", "a.yaml", ok + "problems: [[64, 0, 64]]\n", []string{"problems[0]: ", "dim 0 out of range"}},
		{"problem dims count", "a.yaml", ok + "problems: ['64,64']\n", []string{"problems[0]: problem 64,64 has 2 dims, want 3 (m, n, k)"}},
		{"unquoted flow problem", "a.yaml", ok + "problems: [64,64,64]\n", []string{"problems[0]: problem 64 has 1 dims, want 3 (m, n, k)", `quote "1024,1024" in a [...] list`}},
		{"problem repeated", "a.yaml", ok + "problems: ['8,8,8', [8, 8, 8]]\n", []string{"problems[1]: problem 8,8,8 already listed as problems[0]"}},
		{"problems mixed lengths", "a.yaml", "name: k\nevaluator: replay:x.json\nproblems: ['1,2', '1,2,3']\n", []string{"problems[1]: problem 1,2,3 has 3 dims, want 2 like 1,2"}},
		{"problems map entry", "a.yaml", "name: k\nevaluator: replay:x.json\nproblems: {big: 'a'}\n", []string{"problems.big: "}},
		{"problem_dims builtin", "a.yaml", ok + "problem_dims: [x, y, z]\n", []string{"problem_dims: builtin:sgemm names its dims m, n, k"}},
		{"problem_dims keyword", "a.yaml", "name: k\nevaluator: replay:x.json\nproblem_dims: [in]\n", []string{`problem_dims[0] "in": want a name`}},
		{"problem_dims twice", "a.yaml", "name: k\nevaluator: replay:x.json\nproblem_dims: [n, n]\n", []string{`problem_dims[1] "n": listed twice`}},
		{"problems vs problem_dims", "a.yaml", "name: k\nevaluator: replay:x.json\nproblem_dims: [n]\nproblems: ['1,2']\n", []string{"problems[0]: problem 1,2 has 2 dims, want 1 (n)"}},
		{"yaml alias bomb", "a.yaml", "a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n", []string{"too large", "YAML aliases"}},
		{"yaml merge key", "a.yaml", "base: &b {name: k}\n<<: *b\n", []string{"merge keys"}},
		{"t1 bad", "x.T1.json", `{"ConfigurationSpace": {"TuningParameters": []}}`, []string{"no parameters"}},
		{"t1 bad condition", "x.json", `{"General": {"BenchmarkName": "x"}, "ConfigurationSpace": {"TuningParameters": [{"Name": "a", "Type": "int", "Values": "[1, 2]"}], "Conditions": [{"Expression": "a <"}]}}`, []string{"column"}},
		{"t1 bad name", "x.json", `{"General": {"BenchmarkName": "a b"}, "ConfigurationSpace": {"TuningParameters": [{"Name": "a", "Type": "int", "Values": "[1, 2]"}]}}`, []string{`General.BenchmarkName: name "a b"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("/etc/quasim/kernels.d", tt.file)
			_, err := Parse(path, []byte(tt.src))
			if err == nil {
				t.Fatalf("Parse(%q) = nil error, want %q", tt.src, tt.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+": ") {
				t.Errorf("Parse(%q) = %q, want it to start with the file %q", tt.src, msg, path)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Parse(%q) = %q, want it to contain %q", tt.src, msg, w)
				}
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Parse(%q) = %v, want it to match ErrInvalid", tt.src, err)
			}
			if !IsFieldError(err) {
				t.Errorf("Parse(%q) = %T, want a *FieldError", tt.src, err)
			}
		})
	}
}

func TestBuiltins(t *testing.T) {
	t.Parallel()
	specs := Builtins()
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
		if s.Source != SourceBuiltin || s.Evaluator != "builtin:"+s.Name || s.Schedule != DefaultSchedule ||
			s.Budget != (Budget{Evals: DefaultEvals}) || s.Objective != DefaultObjective || len(s.Problems) == 0 {
			t.Errorf("Builtins() %s = %+v", s.Name, s)
		}
		for _, p := range s.Problems {
			if p.Name != p.String() || len(p.Names) != len(p.Dims) {
				t.Errorf("%s: problem %+v not normalised", s.Name, p)
			}
		}
		back, err := Parse(s.Name+".json", s.Raw)
		if err != nil {
			t.Fatalf("Parse(Raw of %s) = %v", s.Name, err)
		}
		if back.Hash != s.Hash {
			t.Errorf("%s: Raw parses to hash %s, want %s", s.Name, back.Hash, s.Hash)
		}
		// A file naming only the kernel is the same spec.
		file := mustParse(t, s.Name+".yaml", "name: "+s.Name+"\nevaluator: builtin:"+s.Name+"\n")
		if file.Hash != s.Hash {
			t.Errorf("%s: minimal file hash %s, want %s", s.Name, file.Hash, s.Hash)
		}
		jobs, err := s.Jobs()
		if err != nil {
			t.Fatalf("%s: Jobs() = %v", s.Name, err)
		}
		if len(jobs) != len(s.Problems) {
			t.Errorf("%s: %d jobs, want %d", s.Name, len(jobs), len(s.Problems))
		}
	}
	if want := builtin.Kernels(); !slices.Equal(names, want) {
		t.Errorf("Builtins() names = %v, want %v", names, want)
	}
}

func TestQuoteRoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "ijk", `a"b`, `back\slash`, "new\nline", "tab\tand ünïcode", "'"} {
		e, err := genome.Compile("x in ["+quote(s)+"]", func(string) (int, bool) { return 0, true })
		if err != nil {
			t.Fatalf("Compile(quote(%q)) = %v", s, err)
		}
		if ok, err := e.Truth([]genome.Value{genome.Str(s)}); err != nil || !ok {
			t.Errorf("x in [quote(%q)] with x = %q: %v, %v; want true", s, s, ok, err)
		}
	}
}
