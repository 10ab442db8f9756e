package spec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// This file decodes and checks the spec's structured sections: problems,
// budget, verify (with its error budget) and precision.

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
