package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/evaluate/opencl"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// Defaults filled in for fields a spec leaves out.
const (
	DefaultObjective = "time"
	DefaultSchedule  = "@every 6h"
	DefaultEvals     = 60
)

// SourceBuiltin is the Source of the specs Builtins returns.
const SourceBuiltin = "builtin"

// Budget bounds one tuning cycle.
type Budget struct {
	// Evals is the most configs measured per cycle; 0 means no limit on
	// evaluations, which needs Seconds > 0.
	Evals int `json:"evals"`
	// Seconds is the most wall time per cycle; 0 means no time limit.
	Seconds float64 `json:"seconds,omitempty"`
}

// Verify says how a winning config is verified before it is certified.
// Empty fields mean the certificate issuer's defaults.
type Verify struct {
	Tolerance        string  `json:"tolerance,omitempty"`        // abs, rel or ulp
	Value            float64 `json:"value,omitempty"`            // the tolerance, >= 0
	Repeats          int     `json:"repeats,omitempty"`          // runs compared bit for bit, >= 0
	Nondeterministic string  `json:"nondeterministic,omitempty"` // reject or certify
	Inputs           string  `json:"inputs,omitempty"`           // signed or positive seeded inputs
	// ErrorBudget is the largest error a served config may have, both
	// by its a-priori bound and as measured (zero: none).
	ErrorBudget ErrorBudget `json:"error_budget,omitzero"`
}

// ErrorBudget is a job's error budget: exactly one of its fields is set,
// and > 0; all zero is no budget.
type ErrorBudget struct {
	Abs float64 `json:"abs,omitempty"`
	Rel float64 `json:"rel,omitempty"`
	ULP float64 `json:"ulp,omitempty"`
}

// Settings is b as evaluate's kind and value.
func (b ErrorBudget) Settings() evaluate.ErrorBudget {
	switch {
	case b.Abs > 0:
		return evaluate.ErrorBudget{Kind: evaluate.ToleranceAbs, Value: b.Abs}
	case b.Rel > 0:
		return evaluate.ErrorBudget{Kind: evaluate.ToleranceRel, Value: b.Rel}
	case b.ULP > 0:
		return evaluate.ErrorBudget{Kind: evaluate.ToleranceULP, Value: b.ULP}
	}
	return evaluate.ErrorBudget{}
}

// Spec is one parsed kernel spec: a YAML/JSON spec file, a FAIR T1 file, or
// a builtin kernel. It is not modified after Parse or Builtins returns it.
type Spec struct {
	Name      string
	Source    string // absolute file path, or "builtin"
	Hash      string // 16 hex chars over the normalised spec; see the package doc
	Evaluator string // "builtin:sgemm", "replay:/abs/path.json.gz", or "" for a bare T1 file
	Objective string
	Schedule  string // cron, as written (default "@every 6h")
	Budget    Budget
	// Problems are the problem sizes to tune, Name being the dims joined by
	// ","; for a builtin kernel they default to its DefaultProblems, for
	// replay they stay empty until Jobs reads the recording.
	Problems []evaluate.Problem
	// ProblemDims names the dims (problem_dims, or the builtin kernel's);
	// nil when unnamed.
	ProblemDims []string
	Params      map[string][]genome.Value // narrowing, by param name (nil if none)
	// Precision names the precision parameters the file declares and the
	// stage each sets (nil if none); a builtin kernel declares its own.
	Precision   map[string]precision.Stage
	Constraints []string
	Default     map[string]genome.Value // partial default config (nil if none)
	Verify      Verify
	TuneOnMiss  bool
	OnMiss      OnMiss // bounds on the jobs misses add; see MissBounds
	// Timeout bounds one measurement by an exec harness (0: its default).
	Timeout time.Duration
	// HarnessLog receives an exec harness's stderr (nil discards it); set
	// by the caller, not read from the file.
	HarnessLog io.Writer
	// OpenCL is the kernel of an `evaluator: opencl` spec (nil otherwise);
	// openclSums are its sources' SHA-256, which the hash covers.
	OpenCL     *opencl.Kernel
	openclSums []string
	// OpenCLRun says how to run OpenCL kernels here; set by the caller,
	// not read from the file (nil: Jobs refuses an opencl spec).
	OpenCLRun *OpenCLRun
	// Note says why a spec is listed but not tuned (an OpenCL T1 file
	// whose kernel cannot be run as written), by field; empty otherwise.
	Note string
	T1   *genome.T1 // set for FAIR T1 files
	Raw  []byte     // the file's bytes (for a builtin: its canonical JSON)
}

// OpenCLRun is how this machine runs OpenCL kernels.
type OpenCLRun struct {
	// Worker is the command that starts a worker (quasimd opencl-worker).
	Worker []string
	// CacheDir keeps compiled programs (empty: none on disk).
	CacheDir string
	// Env is added to the worker's environment.
	Env []string
	// Unavailable, when set, says why there is no OpenCL device here:
	// Jobs refuses opencl specs with it.
	Unavailable string
}

// topKeys are the keys a spec file may hold, in the order they are checked.
var topKeys = []string{
	"name", "evaluator", "objective", "problems", "problem_dims", "parameters",
	"constraints", "schedule", "budget", "default", "verify", "tune_on_miss", "on_miss", "timeout",
	"precision", "opencl", "t1",
}

// Parse reads one spec file; path names it in errors and resolves a
// relative replay path. The format follows the extension: .yaml and .yml
// are YAML, .json is JSON, and a .json holding "ConfigurationSpace" (or
// named *.T1.json) is a FAIR T1 file. Every error is a *FieldError naming
// the file and the field.
//
// Parse checks the file itself and opens nothing: replay files are read and
// evaluators built by Jobs. It does parse the schedule, compile the
// constraints (against the builtin kernel's parameters and dims when the
// evaluator is builtin, for syntax otherwise) and check narrowing and
// default values against a builtin kernel's parameters.
func Parse(path string, data []byte) (*Spec, error) {
	src := path
	if abs, err := filepath.Abs(path); err == nil {
		src = abs
	}
	root, err := parseTree(path, data)
	if err != nil {
		return nil, err
	}
	return parseSpec(path, src, data, root)
}

// parseSpec decodes a kernel spec (or T1) file's tree.
func parseSpec(path, src string, data []byte, root *node) (*Spec, error) {
	d := decoder{file: path}
	if isT1(path, root) {
		return parseT1(path, src, data)
	}
	if isPipeline(root) {
		return nil, d.errf("pipeline", root.get("pipeline"), "this file declares a pipeline, not a kernel spec")
	}
	s := &Spec{Source: src, Raw: bytes.Clone(data)}
	if err := s.decode(d, root); err != nil {
		return nil, err
	}
	s.Hash = s.hash()
	return s, nil
}

// isT1 reports whether a parsed file is a FAIR T1 file: a .json named
// *.T1.json or holding "ConfigurationSpace".
func isT1(path string, root *node) bool {
	return strings.ToLower(filepath.Ext(path)) == ".json" && (isT1Name(path) || root.get("ConfigurationSpace") != nil)
}

func isT1Name(path string) bool {
	return strings.HasSuffix(strings.ToLower(filepath.Base(path)), ".t1.json")
}

// parseT1 reads a FAIR T1 file as a spec with no evaluator.
func parseT1(path, src string, data []byte) (*Spec, error) {
	// genome's errors start with the file name; FieldError adds it back.
	trim := func(err error) error {
		return &FieldError{File: path, Err: errors.New(strings.TrimPrefix(err.Error(), path+": "))}
	}
	t, err := genome.ParseT1(path, data)
	if err != nil {
		return nil, trim(err)
	}
	if _, err := t.Space(); err != nil {
		return nil, trim(err)
	}
	name := t.Name
	field := "General.BenchmarkName"
	if name == "" {
		base := filepath.Base(path)
		name = base[:len(base)-len(filepath.Ext(base))]
		if isT1Name(base) {
			name = base[:len(base)-len(".T1.json")]
		}
		field = ""
	}
	if err := validName(name); err != nil {
		return nil, &FieldError{File: path, Field: field, Err: fmt.Errorf("name %w", err)}
	}
	s := &Spec{
		Name:      name,
		Source:    src,
		Objective: DefaultObjective,
		Schedule:  DefaultSchedule,
		Budget:    Budget{Evals: DefaultEvals},
		T1:        t,
		Raw:       bytes.Clone(data),
	}
	if len(t.ProblemSize) > 0 {
		s.Problems = []evaluate.Problem{newProblem(t.ProblemSize, nil)}
	}
	if isOpenCLT1(data) {
		s.t1OpenCL(path, data)
		if s.OpenCL != nil {
			s.Constraints = slices.Clone(t.Constraints)
		}
	}
	s.Hash = s.hash()
	return s, nil
}

// newProblem returns a normalised problem: its Name is the dims joined by ",".
func newProblem(dims []int, names []string) evaluate.Problem {
	p := evaluate.Problem{Dims: slices.Clone(dims), Names: slices.Clone(names)}
	p.Name = p.String()
	return p
}

// kernelInfo is what Parse knows of a builtin kernel without a problem.
type kernelInfo struct {
	params    []genome.Param
	dims      []string
	problems  []evaluate.Problem
	precision map[string]precision.Stage
}

func builtinInfo(name string) (*kernelInfo, error) {
	k, err := builtin.New(name, builtin.Options{})
	if err != nil {
		return nil, err
	}
	ps := k.DefaultProblems()
	if len(ps) == 0 {
		return nil, fmt.Errorf("builtin kernel %q has no default problems", name)
	}
	sp, err := k.Space(ps[0])
	if err != nil {
		return nil, err
	}
	info := &kernelInfo{params: sp.Params(), dims: ps[0].Names, precision: k.Precision()}
	for _, p := range ps {
		info.problems = append(info.problems, newProblem(p.Dims, p.Names))
	}
	return info, nil
}

// splitEvaluator splits "kind:arg".
func splitEvaluator(ev string) (kind, arg string) {
	kind, arg, _ = strings.Cut(ev, ":")
	return kind, arg
}

// decode fills s from a spec file's tree and checks it.
func (s *Spec) decode(d decoder, root *node) error {
	if root.kind != nMap {
		return d.errf("", root, "want a mapping of spec keys, got %s", describe(root))
	}
	if err := d.knownKeys("", root, topKeys); err != nil {
		return err
	}
	field := func(key string) *node {
		n := root.get(key)
		if n.isNull() {
			return nil
		}
		return n
	}

	// name
	n := field("name")
	if n == nil {
		return d.errf("name", nil, "missing (want [A-Za-z0-9_.-]+)")
	}
	name, err := d.str("name", n)
	if err != nil {
		return err
	}
	if err := validName(name); err != nil {
		return d.wrap("name", n, err)
	}
	s.Name = name

	// evaluator
	var info *kernelInfo
	n = field("evaluator")
	if n == nil {
		return d.errf("evaluator", nil, "missing (want builtin:<kernel>, replay:<file>, exec:<command>, wasm:<module> or opencl)")
	}
	ev, err := d.str("evaluator", n)
	if err != nil {
		return err
	}
	switch kind, arg := splitEvaluator(ev); kind {
	case "builtin":
		if info, err = builtinInfo(arg); err != nil {
			if errors.Is(err, builtin.ErrUnknownKernel) {
				return d.errf("evaluator", n, "%q: unknown builtin kernel (have %s)", ev, strings.Join(builtin.Kernels(), ", "))
			}
			return d.errf("evaluator", n, "%q: %v", ev, err)
		}
		s.Evaluator = ev
	case "replay":
		if strings.TrimSpace(arg) == "" {
			return d.errf("evaluator", n, "%q: no file after replay:", ev)
		}
		if !filepath.IsAbs(arg) {
			arg = filepath.Join(filepath.Dir(s.Source), arg)
		}
		s.Evaluator = "replay:" + filepath.Clean(arg)
	case "exec":
		// The command comes from this file only, never from the API: see
		// docs/kernel-authors/harness-protocol.md.
		args := strings.Fields(arg)
		if len(args) == 0 {
			return d.errf("evaluator", n, "%q: no command after exec:", ev)
		}
		if !filepath.IsAbs(args[0]) && strings.Contains(args[0], "/") {
			args[0] = filepath.Clean(filepath.Join(filepath.Dir(s.Source), args[0]))
		}
		s.Evaluator = "exec:" + strings.Join(args, " ")
	case "wasm":
		if strings.TrimSpace(arg) == "" {
			return d.errf("evaluator", n, "%q: no module after wasm:", ev)
		}
		if !filepath.IsAbs(arg) {
			arg = filepath.Join(filepath.Dir(s.Source), arg)
		}
		s.Evaluator = "wasm:" + filepath.Clean(arg)
	case "opencl":
		if strings.TrimSpace(arg) != "" {
			return d.errf("evaluator", n, "%q: opencl takes no argument; the kernel is described in the opencl section", ev)
		}
		s.Evaluator = "opencl"
	default:
		return d.errf("evaluator", n, "%q: unknown kind %q (want builtin:<kernel>, replay:<file>, exec:<command>, wasm:<module> or opencl)", ev, kind)
	}
	if on := field("opencl"); on != nil && s.Evaluator != "opencl" {
		return d.errf("opencl", on, "an opencl section needs evaluator: opencl")
	}
	if tn := field("t1"); tn != nil && s.Evaluator != "opencl" {
		return d.errf("t1", tn, "a t1 kernel needs evaluator: opencl")
	}

	// objective
	s.Objective = DefaultObjective
	if n = field("objective"); n != nil {
		obj, err := d.str("objective", n)
		if err != nil {
			return err
		}
		o, err := evaluate.ParseObjective(obj)
		if err != nil {
			return d.errf("objective", n, "%s", strings.TrimPrefix(err.Error(), "objective "))
		}
		s.Objective = o.String() // canonical, for the hash
	}

	// problem_dims, before problems so their lengths can be checked
	if n = field("problem_dims"); n != nil {
		items, err := d.list("problem_dims", n)
		if err != nil {
			return err
		}
		for i, it := range items {
			f := fmt.Sprintf("problem_dims[%d]", i)
			name, err := d.str(f, it)
			if err != nil {
				return err
			}
			if !genome.IsName(name) {
				return d.errf(f, it, "%q: want a name usable in constraints ([A-Za-z_][A-Za-z0-9_]*)", name)
			}
			if slices.Contains(s.ProblemDims, name) {
				return d.errf(f, it, "%q: listed twice", name)
			}
			s.ProblemDims = append(s.ProblemDims, name)
		}
		if len(s.ProblemDims) == 0 {
			s.ProblemDims = nil
		}
		if info != nil && !slices.Equal(s.ProblemDims, info.dims) {
			return d.errf("problem_dims", n, "%s names its dims %s", s.Evaluator, strings.Join(info.dims, ", "))
		}
	}
	if info != nil {
		s.ProblemDims = slices.Clone(info.dims)
	}

	// problems
	if n = field("problems"); n != nil {
		if err := s.decodeProblems(d, n); err != nil {
			return err
		}
	}
	if info != nil && len(s.Problems) == 0 {
		s.Problems = slices.Clone(info.problems)
	}

	// opencl, after problem_dims, which its expressions may name
	var t1 *t1Base
	if s.Evaluator == "opencl" {
		if tn := field("t1"); tn != nil {
			if t1, err = s.decodeT1Ref(d, tn); err != nil {
				return err
			}
			if len(s.Problems) == 0 && len(t1.problem) > 0 {
				if s.ProblemDims != nil && len(s.ProblemDims) != len(t1.problem) {
					return d.errf("problems", nil, "none given, and the T1 file's ProblemSize %s has %d dims where problem_dims names %d", dimsString(t1.problem), len(t1.problem), len(s.ProblemDims))
				}
				s.Problems = []evaluate.Problem{newProblem(t1.problem, s.ProblemDims)}
			}
		}
		on := field("opencl")
		if on == nil && t1 == nil {
			return d.errf("opencl", nil, "missing: evaluator opencl needs an opencl section (source, kernel, tune_params, problem_size, args) or a t1 file")
		}
		if len(s.Problems) == 0 {
			return d.errf("problems", nil, "an opencl kernel measures the problems the spec lists: none given")
		}
		sec, err := s.decodeOpenCL(d, on, t1)
		if err != nil {
			return err
		}
		s.OpenCL, s.openclSums = sec.k, sec.sums
		info = &kernelInfo{params: sec.params, dims: s.ProblemDims}
	}

	// precision, before parameters so their values can be checked
	if n = field("precision"); n != nil {
		if err := s.decodePrecision(d, n, info); err != nil {
			return err
		}
	}

	// parameters
	if n = field("parameters"); n != nil {
		m, err := d.mapping("parameters", n)
		if err != nil {
			return err
		}
		s.Params = make(map[string][]genome.Value, len(m.keys))
		for i, name := range m.keys {
			f := "parameters." + name
			items := []*node{m.vals[i]}
			if m.vals[i].kind == nList {
				items = m.vals[i].items
			}
			if len(items) == 0 {
				return d.errf(f, m.vals[i], "empty list: a parameter keeps at least one value")
			}
			var vals []genome.Value
			for _, it := range items {
				v, err := d.value(f, it)
				if err != nil {
					return err
				}
				for _, w := range vals {
					if w.Kind == v.Kind && w.Equal(v) {
						return d.errf(f, it, "value %s listed twice", literal(v))
					}
				}
				vals = append(vals, v)
			}
			s.Params[name] = vals
		}
		if len(s.Params) == 0 {
			s.Params = nil
		}
		if info != nil {
			if _, err := s.narrowing(d.file, info.params, s.stages(info.precision)); err != nil {
				return withLine(err, m)
			}
		}
	}

	// constraints
	if n = field("constraints"); n != nil {
		items, err := d.list("constraints", n)
		if err != nil {
			return err
		}
		for i, it := range items {
			f := fmt.Sprintf("constraints[%d]", i)
			c, err := d.str(f, it)
			if err != nil {
				return err
			}
			if strings.TrimSpace(c) == "" {
				return d.errf(f, it, "empty expression")
			}
			s.Constraints = append(s.Constraints, c)
		}
		var names []string
		if info != nil {
			for _, p := range info.params {
				names = append(names, p.Name)
			}
			names = append(names, info.dims...)
		}
		for i, c := range s.Constraints {
			if err := compileCheck(c, names, info == nil); err != nil {
				return d.wrap(fmt.Sprintf("constraints[%d]", i), items[i], err)
			}
		}
	}

	// schedule
	s.Schedule = DefaultSchedule
	if n = field("schedule"); n != nil {
		sched, err := d.str("schedule", n)
		if err != nil {
			return err
		}
		sched = strings.TrimSpace(sched)
		if _, err := parseCron(sched); err != nil {
			return d.errf("schedule", n, "%q: %v", sched, err)
		}
		s.Schedule = sched
	}

	// budget
	s.Budget = Budget{Evals: DefaultEvals}
	if n = field("budget"); n != nil {
		if err := s.decodeBudget(d, n); err != nil {
			return err
		}
	}

	// default
	if n = field("default"); n != nil {
		m, err := d.mapping("default", n)
		if err != nil {
			return err
		}
		s.Default = make(map[string]genome.Value, len(m.keys))
		for i, name := range m.keys {
			v, err := d.value("default."+name, m.vals[i])
			if err != nil {
				return err
			}
			s.Default[name] = v
		}
		if len(s.Default) == 0 {
			s.Default = nil
		}
		if info != nil {
			if _, err := s.defaultIndices(d.file, info.params, s.stages(info.precision)); err != nil {
				return withLine(err, m)
			}
		}
	}

	// verify
	if n = field("verify"); n != nil {
		if err := s.decodeVerify(d, n); err != nil {
			return err
		}
	}

	// tune_on_miss
	if n = field("tune_on_miss"); n != nil {
		if s.TuneOnMiss, err = d.boolean("tune_on_miss", n); err != nil {
			return err
		}
	}

	// on_miss
	if n = field("on_miss"); n != nil {
		if err := s.decodeOnMiss(d, n); err != nil {
			return err
		}
	}

	// timeout
	if n = field("timeout"); n != nil {
		v, err := d.str("timeout", n)
		if err != nil {
			return err
		}
		t, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || t <= 0 {
			return d.errf("timeout", n, "%q: want a positive duration such as 30s", v)
		}
		s.Timeout = t
	}
	if t1 != nil {
		s.Constraints = append(slices.Clone(t1.constraints), s.Constraints...)
	}
	return nil
}

func (s *Spec) decodeProblems(d decoder, n *node) error {
	type entry struct {
		field string
		n     *node
	}
	var entries []entry
	switch n.kind {
	case nList:
		for i, it := range n.items {
			entries = append(entries, entry{fmt.Sprintf("problems[%d]", i), it})
		}
	case nMap:
		// A map names its problems; the names only label errors, and the
		// problems are kept in name order so key order does not matter.
		keys := slices.Clone(n.keys)
		slices.Sort(keys)
		for _, k := range keys {
			entries = append(entries, entry{"problems." + k, n.get(k)})
		}
	default:
		return d.errf("problems", n, "want a list or a mapping of problems, got %s", describe(n))
	}
	seen := make(map[string]string)
	for _, e := range entries {
		dims, err := d.problem(e.field, e.n)
		if err != nil {
			return err
		}
		p := newProblem(dims, s.ProblemDims)
		switch {
		case s.ProblemDims != nil && len(dims) != len(s.ProblemDims):
			hint := ""
			if len(dims) == 1 && n.kind == nList {
				hint = `; quote "1024,1024" in a [...] list, where commas split items`
			}
			return d.errf(e.field, e.n, "problem %s has %d dims, want %d (%s)%s", p.Name, len(dims), len(s.ProblemDims), strings.Join(s.ProblemDims, ", "), hint)
		case len(s.Problems) > 0 && len(dims) != len(s.Problems[0].Dims):
			return d.errf(e.field, e.n, "problem %s has %d dims, want %d like %s", p.Name, len(dims), len(s.Problems[0].Dims), s.Problems[0].Name)
		}
		if first, dup := seen[p.Name]; dup {
			return d.errf(e.field, e.n, "problem %s already listed as %s", p.Name, first)
		}
		seen[p.Name] = e.field
		s.Problems = append(s.Problems, p)
	}
	return nil
}

func (s *Spec) decodeBudget(d decoder, n *node) error {
	m, err := d.mapping("budget", n)
	if err != nil {
		return err
	}
	if err := d.knownKeys("budget", m, []string{"evals", "seconds"}); err != nil {
		return err
	}
	if v := m.get("evals"); !v.isNull() {
		e, err := d.integer("budget.evals", v)
		if err != nil {
			return err
		}
		if e < 0 || e > 1<<31-1 {
			return d.errf("budget.evals", v, "%d out of range (want 0 to %d)", e, 1<<31-1)
		}
		s.Budget.Evals = int(e)
	}
	if v := m.get("seconds"); !v.isNull() {
		sec, err := d.number("budget.seconds", v)
		if err != nil {
			return err
		}
		if sec < 0 {
			return d.errf("budget.seconds", v, "%s is negative", genome.PyFloat(sec))
		}
		s.Budget.Seconds = sec
	}
	if s.Budget.Evals == 0 && s.Budget.Seconds == 0 {
		return d.errf("budget", n, "evals and seconds are both 0, so a cycle would never end")
	}
	return nil
}

func (s *Spec) decodeVerify(d decoder, n *node) error {
	m, err := d.mapping("verify", n)
	if err != nil {
		return err
	}
	if err := d.knownKeys("verify", m, []string{"tolerance", "value", "repeats", "nondeterministic", "inputs", "error_budget"}); err != nil {
		return err
	}
	if v := m.get("error_budget"); !v.isNull() {
		if err := s.decodeErrorBudget(d, v); err != nil {
			return err
		}
	}
	oneOf := func(key string, allowed ...string) (string, error) {
		v := m.get(key)
		if v.isNull() {
			return "", nil
		}
		str, err := d.str("verify."+key, v)
		if err != nil {
			return "", err
		}
		if !slices.Contains(allowed, str) {
			return "", d.errf("verify."+key, v, "%q: want %s", str, strings.Join(allowed, " or "))
		}
		return str, nil
	}
	if s.Verify.Tolerance, err = oneOf("tolerance", "abs", "rel", "ulp"); err != nil {
		return err
	}
	if s.Verify.Nondeterministic, err = oneOf("nondeterministic", "reject", "certify"); err != nil {
		return err
	}
	if s.Verify.Inputs, err = oneOf("inputs", evaluate.InputsSigned, evaluate.InputsPositive); err != nil {
		return err
	}
	if v := m.get("value"); !v.isNull() {
		x, err := d.number("verify.value", v)
		if err != nil {
			return err
		}
		if x < 0 {
			return d.errf("verify.value", v, "%s is negative", genome.PyFloat(x))
		}
		s.Verify.Value = x
	}
	if v := m.get("repeats"); !v.isNull() {
		r, err := d.integer("verify.repeats", v)
		if err != nil {
			return err
		}
		if r < 0 || r > 1<<31-1 {
			return d.errf("verify.repeats", v, "%d out of range (want 0 to %d)", r, 1<<31-1)
		}
		s.Verify.Repeats = int(r)
	}
	return nil
}

// decodeErrorBudget reads verify.error_budget: one of abs, rel or ulp, a finite
// number > 0.
func (s *Spec) decodeErrorBudget(d decoder, n *node) error {
	b, err := decodeBudget(d, "verify.error_budget", n)
	s.Verify.ErrorBudget = b
	return err
}

// decodeBudget reads an error budget mapping at field: one of abs, rel or
// ulp, a finite number > 0.
func decodeBudget(d decoder, field string, n *node) (ErrorBudget, error) {
	var b ErrorBudget
	m, err := d.mapping(field, n)
	if err != nil {
		return b, err
	}
	if err := d.knownKeys(field, m, []string{"abs", "rel", "ulp"}); err != nil {
		return b, err
	}
	var set []string
	for _, k := range []string{"abs", "rel", "ulp"} {
		v := m.get(k)
		if v.isNull() {
			continue
		}
		x, err := d.number(field+"."+k, v)
		if err != nil {
			return ErrorBudget{}, err
		}
		if !(x > 0) {
			return ErrorBudget{}, d.errf(field+"."+k, v, "%s: want a number > 0", genome.PyFloat(x))
		}
		set = append(set, k)
		switch k {
		case "abs":
			b.Abs = x
		case "rel":
			b.Rel = x
		default:
			b.ULP = x
		}
	}
	if len(set) != 1 {
		return ErrorBudget{}, d.errf(field, n, "want exactly one of abs, rel or ulp, got %d", len(set))
	}
	return b, nil
}

// decodePrecision reads the precision section: parameter name -> stage.
// For a builtin kernel the parameter must be one of its own precision
// parameters, of that stage.
func (s *Spec) decodePrecision(d decoder, n *node, info *kernelInfo) error {
	m, err := d.mapping("precision", n)
	if err != nil {
		return err
	}
	s.Precision = make(map[string]precision.Stage, len(m.keys))
	for i, name := range m.keys {
		f := "precision." + name
		v, err := d.str(f, m.vals[i])
		if err != nil {
			return err
		}
		st, err := precision.ParseStage(v)
		if err != nil {
			return d.wrap(f, m.vals[i], err)
		}
		if info != nil {
			own, ok := info.precision[name]
			switch {
			case !ok:
				return d.errf(f, m.vals[i], "%q is not a precision parameter of %s (have %s)", name, s.Evaluator, strings.Join(sortedNames(info.precision), ", "))
			case own != st:
				return d.errf(f, m.vals[i], "%s sets the %s precision of %s, not %s", name, own, s.Evaluator, st)
			}
		}
		s.Precision[name] = st
	}
	if len(s.Precision) == 0 {
		s.Precision = nil
	}
	return nil
}

// stages is the precision parameters of a job: the evaluator's own (a
// builtin kernel's), and those the spec declares.
func (s *Spec) stages(own map[string]precision.Stage) map[string]precision.Stage {
	out := maps.Clone(own)
	if out == nil {
		out = make(map[string]precision.Stage, len(s.Precision))
	}
	maps.Copy(out, s.Precision)
	return out
}

// withLine sets the line of a "parameters.<name>" or "default.<name>"
// error to that of the name's value in mapping m.
func withLine(err error, m *node) error {
	var fe *FieldError
	if errors.As(err, &fe) && fe.Line == 0 {
		if _, name, ok := strings.Cut(fe.Field, "."); ok {
			if v := m.get(name); v != nil {
				fe.Line = v.line
			}
		}
	}
	return err
}

// compileCheck compiles a constraint: against names when known, else for
// syntax only (any name resolves).
func compileCheck(src string, names []string, anyName bool) error {
	resolve := func(name string) (int, bool) {
		if anyName {
			return 0, true
		}
		i := slices.Index(names, name)
		return i, i >= 0
	}
	_, err := genome.Compile(src, resolve)
	return err
}

// parseCron parses a schedule with cron.ParseStandard, turning its panics on
// some inputs (a time zone prefix with nothing after it) into errors.
func parseCron(s string) (sched cron.Schedule, err error) {
	if strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ=") {
		if !strings.Contains(s, " ") {
			return nil, errors.New("time zone with no schedule after it")
		}
	}
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid schedule: %v", r)
		}
	}()
	return cron.ParseStandard(s)
}

// CronSchedule parses s.Schedule with cron.ParseStandard.
func (s *Spec) CronSchedule() (cron.Schedule, error) {
	sched, err := parseCron(s.Schedule)
	if err != nil {
		return nil, &FieldError{File: s.file(), Field: "schedule", Err: fmt.Errorf("%q: %w", s.Schedule, err)}
	}
	return sched, nil
}

// file is how errors name s's file.
func (s *Spec) file() string {
	if s.Source == "" {
		return s.Name
	}
	return s.Source
}

// Builtins returns a spec per builtin kernel, sorted by name: evaluator
// builtin:<name>, the kernel's default problems, the default objective,
// schedule and budget, Source "builtin", and Raw its canonical JSON (which
// Parse reads back to the same spec).
func Builtins() []*Spec {
	var out []*Spec
	for _, name := range builtin.Kernels() {
		info, err := builtinInfo(name)
		if err != nil {
			continue // a builtin kernel always builds; nothing to serve otherwise
		}
		s := &Spec{
			Name:        name,
			Source:      SourceBuiltin,
			Evaluator:   "builtin:" + name,
			Objective:   DefaultObjective,
			Schedule:    DefaultSchedule,
			Budget:      Budget{Evals: DefaultEvals},
			Problems:    info.problems,
			ProblemDims: slices.Clone(info.dims),
		}
		s.Raw = s.canonical()
		s.Hash = hashBytes(s.Raw)
		out = append(out, s)
	}
	return out
}

// sortedNames returns the keys of m, sorted.
func sortedNames[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// dimsString formats dims for messages.
func dimsString(dims []int) string {
	parts := make([]string, len(dims))
	for i, x := range dims {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
