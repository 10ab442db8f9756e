package spec

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/quasim/quasim/genome"
)

// decoder turns nodes into typed values; its errors name the file, the field
// and the line.
type decoder struct{ file string }

func (d decoder) errf(field string, n *node, format string, args ...any) error {
	return d.wrap(field, n, fmt.Errorf(format, args...))
}

func (d decoder) wrap(field string, n *node, err error) error {
	fe := &FieldError{File: d.file, Field: field, Err: err}
	if n != nil {
		fe.Line = n.line
	}
	return fe
}

// describe names what n is, for "want X, got Y" messages: a scalar or a
// short list of scalars as written, else its kind.
func describe(n *node) string {
	if n.kind == nList && len(n.items) <= 16 {
		parts := make([]string, len(n.items))
		for i, it := range n.items {
			if it.kind != nScalar {
				return n.kind.String()
			}
			parts[i] = describe(it)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	if n.kind != nScalar {
		return n.kind.String()
	}
	switch v := n.val.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(v)
	case float64:
		return genome.PyFloat(v)
	}
	return fmt.Sprint(n.val)
}

// str reads a string field. Any non-null scalar is taken as written, so
// `name: 123` in YAML is the name "123".
func (d decoder) str(field string, n *node) (string, error) {
	if n.kind != nScalar || n.val == nil {
		return "", d.errf(field, n, "want a string, got %s", describe(n))
	}
	return n.text, nil
}

// integer reads a whole number (an integral float is accepted).
func (d decoder) integer(field string, n *node) (int64, error) {
	switch v := n.val.(type) {
	case int64:
		return v, nil
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v), nil
		}
	}
	return 0, d.errf(field, n, "want an integer, got %s", describe(n))
}

// number reads a finite number.
func (d decoder) number(field string, n *node) (float64, error) {
	switch v := n.val.(type) {
	case int64:
		return float64(v), nil
	case float64:
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			return v, nil
		}
	}
	return 0, d.errf(field, n, "want a finite number, got %s", describe(n))
}

func (d decoder) boolean(field string, n *node) (bool, error) {
	if b, ok := n.val.(bool); ok {
		return b, nil
	}
	return false, d.errf(field, n, "want true or false, got %s", describe(n))
}

func (d decoder) list(field string, n *node) ([]*node, error) {
	if n.kind != nList {
		return nil, d.errf(field, n, "want a list, got %s", describe(n))
	}
	return n.items, nil
}

func (d decoder) mapping(field string, n *node) (*node, error) {
	if n.kind != nMap {
		return nil, d.errf(field, n, "want a mapping, got %s", describe(n))
	}
	return n, nil
}

// value reads a parameter value: an int, float, bool or string.
func (d decoder) value(field string, n *node) (genome.Value, error) {
	if n.kind == nScalar {
		switch v := n.val.(type) {
		case int64:
			return genome.Int(v), nil
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				break
			}
			return genome.Float(v), nil
		case bool:
			return genome.Bool(v), nil
		case string:
			return genome.Str(v), nil
		}
	}
	return genome.Value{}, d.errf(field, n, "want a finite number, a bool or a string, got %s", describe(n))
}

// keys checks that a mapping holds only known keys.
func (d decoder) knownKeys(field string, n *node, known []string) error {
	for i, k := range n.keys {
		ok := false
		for _, w := range known {
			ok = ok || k == w
		}
		if !ok {
			f := k
			if field != "" {
				f = field + "." + k
			}
			return d.errf(f, n.vals[i], "unknown key (want one of %s)", strings.Join(known, ", "))
		}
	}
	return nil
}

// problem reads one problem: "1024,1024,1024" (or "1024x1024x1024"), a list
// of integers, or a single integer.
func (d decoder) problem(field string, n *node) ([]int, error) {
	var dims []int
	bad := func(what string, args ...any) error {
		return d.errf(field, n, "problem %s: "+what, append([]any{describe(n)}, args...)...)
	}
	dim := func(x int64) error {
		if x <= 0 || x > math.MaxInt32 {
			return bad("dim %d out of range (want 1 to %d)", x, math.MaxInt32)
		}
		dims = append(dims, int(x))
		return nil
	}
	switch {
	case n.kind == nList:
		for _, it := range n.items {
			x, ok := it.val.(int64)
			if it.kind != nScalar || !ok {
				return nil, bad("want integers, got %s", describe(it))
			}
			if err := dim(x); err != nil {
				return nil, err
			}
		}
	case n.kind == nScalar:
		switch v := n.val.(type) {
		case int64:
			if err := dim(v); err != nil {
				return nil, err
			}
		case string:
			sep := ","
			if !strings.Contains(v, ",") && strings.Contains(v, "x") {
				sep = "x"
			}
			for part := range strings.SplitSeq(v, sep) {
				x, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
				if err != nil {
					return nil, bad("want integers joined by commas")
				}
				if err := dim(x); err != nil {
					return nil, err
				}
			}
		default:
			return nil, bad("want integers joined by commas")
		}
	default:
		return nil, bad("want integers joined by commas or a list of integers")
	}
	if len(dims) == 0 {
		return nil, bad("no dims")
	}
	return dims, nil
}

// validName reports whether s is a kernel name: [A-Za-z0-9_.-]+, not only dots.
func validName(s string) error {
	if s == "" {
		return errors.New("empty (want [A-Za-z0-9_.-]+)")
	}
	dots := 0
	for _, r := range s {
		ok := r == '_' || r == '.' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return fmt.Errorf("%q: want [A-Za-z0-9_.-]+", s)
		}
		if r == '.' {
			dots++
		}
	}
	if dots == len(s) {
		return fmt.Errorf("%q: want a name that is not only dots", s)
	}
	if len(s) > maxNameLen {
		return fmt.Errorf("%q: longer than %d characters", s, maxNameLen)
	}
	return nil
}

const maxNameLen = 128

// literal writes v as a constraint expression literal.
func literal(v genome.Value) string {
	switch v.Kind {
	case genome.KindString:
		return quote(v.S)
	case genome.KindFloat:
		switch {
		case math.IsInf(v.F, 1):
			return `float("inf")`
		case math.IsInf(v.F, -1):
			return `float("-inf")`
		case math.IsNaN(v.F):
			return `float("nan")`
		}
	}
	return v.String()
}

// quote writes s as a Python string literal in double quotes.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// valueList formats values for messages and constraints: "16, 32, 64".
func valueList(vals []genome.Value) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = literal(v)
	}
	return strings.Join(parts, ", ")
}
