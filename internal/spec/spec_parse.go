package spec

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// This file holds Parse and Builtins: a spec file, a FAIR T1 file or a
// builtin kernel made into a Spec.

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
