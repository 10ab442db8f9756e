package genome

import (
	"errors"
	"slices"
	"strconv"
)

// Expressions are parsed (expr_lex.go) into an exNode tree, then compiled
// twice: into a general tree of closures over Values that implements Python 3
// semantics for every kind, with constant sub-expressions folded, and, when
// the kinds allow, into a fast tree specialised for int parameters (see
// exFastCompile). Eval runs the fast tree when it can and falls back to the
// general one. Neither allocates; errors travel inside Values of kind
// exKindErr and become Go errors only at the top.

// SyntaxError reports where an expression failed to parse.
type SyntaxError struct {
	Expr string // the whole source
	Col  int    // 1-based column (in runes) of the offending token
	Msg  string
}

func (e *SyntaxError) Error() string {
	return "expression " + strconv.Quote(e.Expr) + ": column " + strconv.Itoa(e.Col) + ": " + e.Msg
}

// Expr is a compiled expression. Safe for concurrent Eval.
type Expr struct {
	src     string
	root    exOperand
	fast    exFast // valid when hasFast; see exFastCompile
	hasFast bool
	need    int // len(env) that Eval requires
	slots   []int
	names   []string
}

// Compile parses src once. resolve maps each free name to a slot index in the env
// slice passed to Eval; a name resolve does not know is a *SyntaxError naming it
// and its column. resolve may be nil when src has no names.
func Compile(src string, resolve func(name string) (slot int, ok bool)) (*Expr, error) {
	root, _, err := exParse(src)
	if err != nil {
		return nil, err
	}
	e := &Expr{src: src}
	seen := make(map[string]bool)
	err = exWalk(root, func(n *exNode) *SyntaxError {
		switch n.op {
		case exComp:
			return &SyntaxError{Expr: src, Col: n.col, Msg: "list comprehensions are only supported in value lists"}
		case exName:
			slot, ok := -1, false
			if resolve != nil {
				slot, ok = resolve(n.name)
			}
			if !ok {
				return &SyntaxError{Expr: src, Col: n.col, Msg: "unknown name " + strconv.Quote(n.name)}
			}
			if slot < 0 {
				return &SyntaxError{Expr: src, Col: n.col, Msg: "name " + strconv.Quote(n.name) + " has negative slot " + strconv.Itoa(slot)}
			}
			n.slot = slot
			if !seen[n.name] {
				seen[n.name] = true
				e.names = append(e.names, n.name)
			}
			if !slices.Contains(e.slots, slot) {
				e.slots = append(e.slots, slot)
			}
			e.need = max(e.need, slot+1)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(e.slots)
	if e.root, err = exCompile(src, root); err != nil {
		return nil, err
	}
	e.fast, e.hasFast = exFastCompile(root)
	return e, nil
}

// exWalk visits n and its descendants in source order, stopping at the first error.
func exWalk(n *exNode, f func(*exNode) *SyntaxError) error {
	if err := f(n); err != nil {
		return err
	}
	for _, k := range n.kids {
		if err := exWalk(k, f); err != nil {
			return err
		}
	}
	return nil
}

// Eval evaluates e with env holding the value of each slot. Runtime errors
// (division by zero, unsupported operand types, integer overflow) are returned,
// never panicked.
func (e *Expr) Eval(env []Value) (Value, error) {
	if len(env) < e.need {
		return Value{}, errors.New("expression " + strconv.Quote(e.src) + ": needs " +
			strconv.Itoa(e.need) + " values, got " + strconv.Itoa(len(env)))
	}
	if e.hasFast {
		switch e.fast.typ {
		case exTyInt:
			if i, ok := e.fast.getI(env); ok {
				return Int(i), nil
			}
		case exTyBool:
			if i, ok := e.fast.getI(env); ok {
				return exBool(i != 0), nil
			}
		case exTyFloat:
			if f, ok := e.fast.getF(env); ok {
				return Float(f), nil
			}
		}
	}
	return e.eval(env)
}

// eval is Eval by the general tree only.
func (e *Expr) eval(env []Value) (Value, error) {
	v := e.root.get(env)
	if v.Kind == exKindErr {
		return Value{}, exRuntimeError(e.src, v)
	}
	return v, nil
}

// Truth evaluates e and returns the Python truthiness of the result.
func (e *Expr) Truth(env []Value) (bool, error) {
	if e.hasFast && len(env) >= e.need {
		if e.fast.typ.isInt() {
			if i, ok := e.fast.getI(env); ok {
				return i != 0, nil
			}
		} else if f, ok := e.fast.getF(env); ok {
			return f != 0, nil
		}
	}
	v, err := e.Eval(env)
	return v.Truth(), err
}

// Slots returns the distinct slots e references, ascending.
func (e *Expr) Slots() []int { return slices.Clone(e.slots) }

// Names returns the distinct names e references, in first-use order.
func (e *Expr) Names() []string { return slices.Clone(e.names) }

// String returns the source.
func (e *Expr) String() string { return e.src }

// exKindErr marks an internal error value; its S holds the message. Carrying
// errors in the Value keeps evaluation to one return value and lets the
// operators' slow paths propagate them.
const exKindErr Kind = 0xff

func exErr(msg string) Value { return Value{Kind: exKindErr, S: msg} }

func exRuntimeError(src string, v Value) error {
	return errors.New("expression " + strconv.Quote(src) + ": " + v.S)
}
