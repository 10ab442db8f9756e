package spec

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/genome"
)

// This file decodes and checks a kernel spec's top-level keys, in order.

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
