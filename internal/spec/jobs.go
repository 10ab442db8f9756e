package spec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/evaluate/harness"
	"github.com/quasim/quasim/evaluate/opencl"
	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/evaluate/wasm"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// Job is what the daemon tunes for one problem of a spec.
type Job struct {
	Spec      *Spec
	Problem   evaluate.Problem
	Evaluator evaluate.Evaluator // nil for a spec with no evaluator (a bare T1 file)
	// Space is the evaluator's space for Problem narrowed by the spec's
	// parameters and constraints, or the T1 file's space.
	Space *genome.Space
	// Default is the config served when nothing is tuned: the space's
	// default overridden by the spec's default (see Spec.Jobs).
	Default genome.Config
	// DefaultNote says why Default is not the default the file names
	// (it violates the constraints); empty when it is.
	DefaultNote string
}

// Jobs builds the spec's evaluator (a new one per call: builtin.New with
// default options, or replay.Load) and one Job per problem; the jobs share
// the evaluator, which is safe for concurrent use.
//
// Problems default to a builtin kernel's DefaultProblems and to a
// recording's problem size; a problem a recording does not hold is an error.
// A bare T1 spec gives one job with a nil Evaluator, for the T1 problem size
// (or an empty problem).
//
// Each job's space is the evaluator's, restricted (genome.Space.Restrict) by
// one constraint `name in [v1, v2, ...]` per narrowed parameter, in name
// order, then by the spec's constraints, with the problem's named dims as
// variables. A space left with no valid config is an error. The default
// config is the space's default with the spec's default values; when that
// is not valid, it is the valid config nearest to it (genome.Space.Distance,
// the first in enumeration order on ties) that keeps the spec's default
// values, and an error when there is none.
//
// Errors are *FieldError values naming the spec file and the field:
// evaluator, problems[i], problem_dims, parameters.<name>, constraints[i],
// default or default.<name>.
func (s *Spec) Jobs() ([]Job, error) {
	if s.T1 != nil && s.OpenCL == nil {
		return s.t1Jobs()
	}
	return s.jobsFor(s.Problems)
}

// JobFor builds the job of a problem the spec does not list, such as one a
// runtime asked for (tune_on_miss), with the spec's problem_dims names.
func (s *Spec) JobFor(dims []int) (Job, error) {
	if s.T1 != nil && s.OpenCL == nil {
		return Job{}, s.errf("problems", "a FAIR T1 spec tunes only its own problem")
	}
	if len(dims) == 0 {
		return Job{}, s.errf("problems", "empty problem")
	}
	if s.ProblemDims != nil && len(s.ProblemDims) != len(dims) {
		return Job{}, s.errf("problem_dims", "%d names for problem %s", len(s.ProblemDims), dimsString(dims))
	}
	jobs, err := s.jobsFor([]evaluate.Problem{newProblem(dims, s.ProblemDims)})
	if err != nil {
		return Job{}, err
	}
	return jobs[0], nil
}

// SpaceAt is the space the spec gives problem dims on ev, the evaluator
// of one of its jobs: its parameters and its constraints at that problem.
// It starts no evaluator, so a lookup may ask whether a config tuned at
// another problem is valid at this one.
func (s *Spec) SpaceAt(ev evaluate.Evaluator, dims []int) (*genome.Space, error) {
	if s.ProblemDims != nil && len(s.ProblemDims) != len(dims) {
		return nil, s.errf("problem_dims", "%d names for problem %s", len(s.ProblemDims), dimsString(dims))
	}
	j, err := s.job(ev, newProblem(dims, s.ProblemDims), "problem")
	if err != nil {
		return nil, err
	}
	return j.Space, nil
}

// jobsFor builds the evaluator and one job per problem; no problems means
// the evaluator's own.
func (s *Spec) jobsFor(problems []evaluate.Problem) ([]Job, error) {
	kind, arg := splitEvaluator(s.Evaluator)
	var ev evaluate.Evaluator
	switch kind {
	case "builtin":
		k, err := builtin.New(arg, builtin.Options{})
		if err != nil {
			return nil, s.errf("evaluator", "%q: %w", s.Evaluator, err)
		}
		ev = k
		if len(problems) == 0 {
			for _, p := range k.DefaultProblems() {
				problems = append(problems, newProblem(p.Dims, p.Names))
			}
		}
	case "replay":
		rec, err := replay.Load(arg)
		if err != nil {
			return nil, s.errf("evaluator", "%q: %w", s.Evaluator, err)
		}
		ev = rec
		if len(problems) == 0 {
			if s.ProblemDims != nil && len(rec.Problem) != len(s.ProblemDims) {
				return nil, s.errf("problem_dims", "%d names for the recording's problem %s", len(s.ProblemDims), dimsString(rec.Problem))
			}
			problems = []evaluate.Problem{newProblem(rec.Problem, s.ProblemDims)}
		}
		for i, p := range problems {
			if len(rec.Problem) > 0 && !slices.Equal(p.Dims, rec.Problem) {
				return nil, s.errf(fmt.Sprintf("problems[%d]", i), "problem %s: the recording %s holds problem %s: %w",
					p.Name, rec.Name, dimsString(rec.Problem), evaluate.ErrUnknownProblem)
			}
		}
	case "exec":
		args := strings.Fields(arg)
		if len(args) == 0 {
			return nil, s.errf("evaluator", "%q: no command after exec:", s.Evaluator)
		}
		if len(problems) == 0 {
			return nil, s.errf("problems", "an exec harness measures the problems the spec lists: none given")
		}
		h, err := harness.Start(harness.Options{Command: args, Timeout: s.Timeout, Stderr: lines(s.HarnessLog)})
		if err != nil {
			return nil, s.errf("evaluator", "%w", err)
		}
		ev = h
	case "wasm":
		if len(problems) == 0 {
			return nil, s.errf("problems", "a wasm kernel measures the problems the spec lists: none given")
		}
		m, err := wasm.Load(context.Background(), arg, wasm.Options{Timeout: s.Timeout})
		if err != nil {
			return nil, s.errf("evaluator", "%w", err)
		}
		ev = m
	case "opencl":
		k, err := s.openclEvaluator()
		if err != nil {
			return nil, err
		}
		ev = k
	case "":
		return nil, s.errf("evaluator", "none: the spec cannot be tuned")
	default:
		return nil, s.errf("evaluator", "%q: unknown kind %q", s.Evaluator, kind)
	}
	jobs := make([]Job, 0, len(problems))
	for i, p := range problems {
		j, err := s.job(ev, p, fmt.Sprintf("problems[%d]", i))
		if err != nil {
			if c, ok := ev.(io.Closer); ok {
				c.Close()
			}
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// job builds the job of one problem.
func (s *Spec) job(ev evaluate.Evaluator, p evaluate.Problem, field string) (Job, error) {
	base, err := ev.Space(p)
	if err != nil {
		return Job{}, s.errf(field, "problem %s: %w", p.Name, err)
	}
	params := base.Params()
	prec, err := s.precisionOf(ev, params)
	if err != nil {
		return Job{}, err
	}
	narrow, err := s.narrowing(s.file(), params, prec)
	if err != nil {
		return Job{}, err
	}
	narrow = append(narrow, s.fullPrecision(params, prec)...)

	// The problem's named dims become variables, unless the space has them.
	have := base.Vars()
	vars := make(map[string]genome.Value)
	if len(p.Names) == len(p.Dims) {
		for i, name := range p.Names {
			if _, isParam := base.Param(name); isParam {
				return Job{}, s.errf("problem_dims", "%q is also a parameter of %s", name, s.Evaluator)
			}
			if _, ok := have[name]; !ok {
				vars[name] = genome.Int(int64(p.Dims[i]))
			}
		}
	}
	names := make([]string, 0, len(params)+len(have)+len(vars))
	for _, q := range params {
		names = append(names, q.Name)
	}
	names = append(names, sortedNames(have)...)
	names = append(names, sortedNames(vars)...)
	for i, c := range s.Constraints {
		if err := compileCheck(c, names, false); err != nil {
			return Job{}, s.errf(fmt.Sprintf("constraints[%d]", i), "%w", err)
		}
	}

	space := base
	if extra := append(narrow, s.Constraints...); len(extra) > 0 || len(vars) > 0 {
		if space, err = base.Restrict(extra, vars); err != nil {
			return Job{}, s.errf(field, "problem %s: restrict the space: %w", p.Name, err)
		}
	}

	def, err := s.defaultIndices(s.file(), params, prec)
	if err != nil {
		return Job{}, err
	}
	c, note, err := resolveDefault(space, def)
	switch {
	case errors.Is(err, genome.ErrEmptySpace):
		return Job{}, s.errf(field, "problem %s: no valid config is left by parameters and constraints", p.Name)
	case err != nil:
		return Job{}, s.errf("default", "%w", err)
	}
	if err := s.checkReference(ev, space, p); err != nil {
		return Job{}, err
	}
	return Job{Spec: s, Problem: p, Evaluator: ev, Space: space, Default: c, DefaultNote: note}, nil
}

// checkReference refuses an OpenCL spec whose reference config, the one
// every config's output is compared with (check.reference, else the
// default), is not a valid config of the job's space: every config would
// be checked against a run that breaks the spec's own rules.
func (s *Spec) checkReference(ev evaluate.Evaluator, space *genome.Space, p evaluate.Problem) error {
	oe, ok := ev.(*opencl.Evaluator)
	if !ok {
		return nil
	}
	key, err := oe.ReferenceKey()
	if err != nil || key == "" {
		return err
	}
	c, err := space.ParseKey(key)
	if err == nil {
		err = space.Check(c)
	}
	if err == nil {
		return nil
	}
	field, what := "check.reference", "the check's reference config"
	switch {
	case s.OpenCL.Check.Reference != nil:
	case len(s.Default) > 0:
		field, what = "default", "the default config, the check's reference without check.reference,"
	default:
		field, what = "check.reference", "with no check.reference and no default, the reference is every parameter's first value:"
	}
	return s.errf(field, "%s %s is not a valid config at problem %s (%v): name a valid config in check.reference", what, key, p.Name, err)
}

// t1Jobs is the one job of a bare T1 spec.
func (s *Spec) t1Jobs() ([]Job, error) {
	space, err := s.T1.Space()
	if err != nil {
		return nil, s.errf("", "%w", err)
	}
	var p evaluate.Problem
	if len(s.Problems) > 0 {
		p = s.Problems[0]
	}
	c, note, err := resolveDefault(space, nil)
	if err != nil {
		return nil, s.errf("ConfigurationSpace", "%w", err)
	}
	return []Job{{Spec: s, Problem: p, Space: space, Default: c, DefaultNote: note}}, nil
}

// resolveDefault returns the default config of space: its default with the
// values in fixed (value index by parameter index) when that is valid, else
// the valid config nearest to it (genome.Space.Distance; the first in
// enumeration order on ties) that keeps the fixed values; the note then
// says which default was replaced, why and by what.
func resolveDefault(space *genome.Space, fixed map[int]int) (genome.Config, string, error) {
	c := space.Default()
	for i, j := range fixed {
		c[i] = j
	}
	checkErr := space.Check(c)
	if checkErr == nil {
		return c, "", nil
	}
	dist := space.DistanceCost(c)
	cost := func(i, j int) float64 {
		if f, ok := fixed[i]; ok && f != j {
			return math.Inf(1)
		}
		return dist(i, j)
	}
	// On a space small enough to list this scans it; on a larger one it
	// is genome's bounded search, which lists nothing.
	best, found := space.Nearest(nil, cost, nil)
	switch {
	case found:
		note := fmt.Sprintf("the default %s is not a valid config (%v); serving the nearest valid one, %s", space.Key(c), checkErr, space.Key(best))
		return best, note, nil
	case len(fixed) == 0 || (space.Enumerable() && space.Size() == 0):
		return nil, "", genome.ErrEmptySpace
	}
	params := space.Params()
	var vals []string
	for i, q := range params {
		if j, ok := fixed[i]; ok {
			vals = append(vals, q.Name+" = "+literal(q.Values[j]))
		}
	}
	return nil, "", fmt.Errorf("no valid config has %s: %w", strings.Join(vals, ", "), checkErr)
}

// precisionOf is the precision parameters of a job on evaluator ev: a
// builtin kernel's own and those the spec declares. A declared parameter
// must be one of ev's, with values of its stage listed most accurate
// first.
func (s *Spec) precisionOf(ev evaluate.Evaluator, params []genome.Param) (map[string]precision.Stage, error) {
	var own map[string]precision.Stage
	if k, ok := ev.(interface {
		Precision() map[string]precision.Stage
	}); ok {
		own = k.Precision()
	}
	prec := s.stages(own)
	for _, name := range sortedNames(s.Precision) {
		field := "precision." + name
		q, err := s.param(s.file(), params, name, field)
		if err != nil {
			return nil, err
		}
		vals := make([]string, len(q.Values))
		for i, v := range q.Values {
			vals[i] = v.S
			if v.Kind != genome.KindString {
				return nil, s.errf(field, "%s's value %s is not the name of a format (%s stage)", name, literal(v), prec[name])
			}
		}
		if err := prec[name].CheckOrder(vals); err != nil {
			return nil, s.errf(field, "%s of %s: %w", name, s.Evaluator, err)
		}
	}
	return prec, nil
}

// fullPrecision keeps a job without an error budget at FP32 or better:
// for each precision parameter the spec does not narrow, a constraint
// allowing only its values no less accurate than fp32 (fp32 input, an
// fp64, kahan or fp32 accumulator). Lower precision is searched only
// where a budget says how much error the job accepts.
func (s *Spec) fullPrecision(params []genome.Param, prec map[string]precision.Stage) []string {
	if s.Verify.ErrorBudget != (ErrorBudget{}) {
		return nil
	}
	var out []string
	for _, q := range params {
		st, ok := prec[q.Name]
		if _, narrowed := s.Params[q.Name]; !ok || narrowed {
			continue
		}
		fp32, _ := st.Rank("fp32")
		var keep []genome.Value
		for _, v := range q.Values {
			if r, err := st.Rank(v.S); err == nil && r <= fp32 {
				keep = append(keep, v)
			}
		}
		if len(keep) > 0 && len(keep) < len(q.Values) {
			out = append(out, q.Name+" in ["+valueList(keep)+"]")
		}
	}
	return out
}

// match finds a spec value among parameter q's values; for a precision
// parameter (stage known) by the value's rank, so "fp32" names a kernel's
// "float32", and a name of no format is an error saying what the stage
// accepts.
func match(q genome.Param, v genome.Value, prec map[string]precision.Stage) (int, bool, error) {
	st, isPrec := prec[q.Name]
	if !isPrec || v.Kind != genome.KindString {
		j, ok := matchValue(q, v)
		return j, ok, nil
	}
	r, err := st.Rank(v.S)
	if err != nil {
		return 0, false, err
	}
	for j, w := range q.Values {
		if wr, err := st.Rank(w.S); err == nil && wr == r {
			return j, true, nil
		}
	}
	return 0, false, nil
}

// narrowing checks the narrowed parameters against the evaluator's and
// returns a constraint per narrowed parameter, in name order.
func (s *Spec) narrowing(file string, params []genome.Param, prec map[string]precision.Stage) ([]string, error) {
	var out []string
	for _, name := range sortedNames(s.Params) {
		field := "parameters." + name
		q, err := s.param(file, params, name, field)
		if err != nil {
			return nil, err
		}
		idx := make([]int, 0, len(s.Params[name]))
		for _, v := range s.Params[name] {
			j, ok, err := match(q, v, prec)
			if err != nil {
				return nil, errAt(file, field, "%w", err)
			}
			if !ok {
				return nil, errAt(file, field, "%s is not a value of %s (have %s)", literal(v), name, valueList(q.Values))
			}
			idx = append(idx, j)
		}
		slices.Sort(idx) // the parameter's order, whatever the file's
		allowed := make([]genome.Value, 0, len(idx))
		for i, j := range idx {
			if i > 0 && j == idx[i-1] {
				continue // 1 and 1.0 name the same value
			}
			allowed = append(allowed, q.Values[j])
		}
		out = append(out, name+" in ["+valueList(allowed)+"]")
	}
	return out, nil
}

// defaultIndices checks the spec's default against the evaluator's
// parameters and returns the value index of each named parameter, by
// parameter index.
func (s *Spec) defaultIndices(file string, params []genome.Param, prec map[string]precision.Stage) (map[int]int, error) {
	out := make(map[int]int, len(s.Default))
	for _, name := range sortedNames(s.Default) {
		field := "default." + name
		q, err := s.param(file, params, name, field)
		if err != nil {
			return nil, err
		}
		v := s.Default[name]
		j, ok, err := match(q, v, prec)
		if err != nil {
			return nil, errAt(file, field, "%w", err)
		}
		if !ok {
			return nil, errAt(file, field, "%s is not a value of %s (have %s)", literal(v), name, valueList(q.Values))
		}
		if vals, narrowed := s.Params[name]; narrowed && !narrowedTo(q, vals, j, prec) {
			return nil, errAt(file, field, "%s is not among parameters.%s (%s)", literal(v), name, valueList(vals))
		}
		i := slices.IndexFunc(params, func(p genome.Param) bool { return p.Name == name })
		out[i] = j
	}
	return out, nil
}

// param finds a parameter by name.
func (s *Spec) param(file string, params []genome.Param, name, field string) (genome.Param, error) {
	for _, q := range params {
		if q.Name == name {
			return q, nil
		}
	}
	have := make([]string, len(params))
	for i, q := range params {
		have[i] = q.Name
	}
	return genome.Param{}, errAt(file, field, "no such parameter of %s (have %s)", s.Evaluator, strings.Join(have, ", "))
}

// matchValue finds v among q's values: by Python equality, or by text for a
// string parameter (so `16` matches the string "16").
func matchValue(q genome.Param, v genome.Value) (int, bool) {
	for j, w := range q.Values {
		if w.Equal(v) {
			return j, true
		}
	}
	if q.Kind == genome.KindString && v.Kind != genome.KindString {
		for j, w := range q.Values {
			if w.S == v.String() {
				return j, true
			}
		}
	}
	return 0, false
}

// narrowedTo reports whether value j of q is among the spec values vals.
func narrowedTo(q genome.Param, vals []genome.Value, j int, prec map[string]precision.Stage) bool {
	for _, v := range vals {
		if k, ok, _ := match(q, v, prec); ok && k == j {
			return true
		}
	}
	return false
}

// errf returns a *FieldError of s's file.
func (s *Spec) errf(field, format string, args ...any) error {
	return errAt(s.file(), field, format, args...)
}

func errAt(file, field, format string, args ...any) error {
	return &FieldError{File: file, Field: field, Err: fmt.Errorf(format, args...)}
}

// openclEvaluator starts the worker of an opencl spec. Without an explicit
// reference, the spec's default config is the reference.
func (s *Spec) openclEvaluator() (*opencl.Evaluator, error) {
	run := s.OpenCLRun
	switch {
	case s.OpenCL == nil:
		return nil, s.errf("opencl", "missing")
	case run == nil || len(run.Worker) == 0:
		return nil, s.errf("evaluator", "opencl: no worker to run OpenCL kernels in (quasimd runs them)")
	case run.Unavailable != "":
		return nil, s.errf("evaluator", "opencl: skipped, no OpenCL device on this machine: %s", run.Unavailable)
	}
	k := *s.OpenCL
	k.CacheDir = run.CacheDir
	k.PrepareTimeout = s.Timeout
	for _, p := range s.Problems {
		k.Problems = append(k.Problems, p.Dims)
	}
	// Answers and verify functions judge outputs alone; the default is no reference for them.
	if k.Check.Reference == nil && k.Check.ReferenceKernel == "" && len(s.Default) > 0 && !k.Answers() && k.Check.Verify == "" {
		k.Check.Reference = make(map[string]any, len(s.Default))
		for name, v := range s.Default {
			k.Check.Reference[name] = v.Native()
		}
	}
	var reps evaluate.Reps
	if k.Iterations > 0 {
		reps.Min, reps.Max = min(3, k.Iterations), k.Iterations
	}
	ev, err := opencl.New(k, opencl.Options{Worker: run.Worker, Timeout: s.Timeout, Reps: reps, Stderr: lines(s.HarnessLog), Env: run.Env})
	if err != nil {
		return nil, s.errf("evaluator", "%w", err)
	}
	return ev, nil
}
