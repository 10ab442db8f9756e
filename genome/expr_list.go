package genome

import (
	"errors"
	"strconv"
)

// exMaxList bounds the values EvalList produces, so a stray range(10**18)
// fails instead of exhausting memory.
const exMaxList = 1 << 20

// EvalList evaluates a FAIR T1 "Values" string into a list of values. It accepts
// a list or tuple literal whose elements are constant expressions ("[16, 32, 48]",
// "[1, 2.5, True, 'a', 12*1024]"), "range(a[, b[, c]])" and "list(range(...))",
// and list comprehensions with one "for" over a list or range and optional "if"
// clauses ("[16*i for i in range(1,9)]", "[2**i for i in range(0, 5) if i != 3]").
// Errors are *SyntaxError, or plain errors naming the source for evaluation
// failures such as division by zero.
func EvalList(src string) ([]Value, error) {
	root, first, err := exParse(src)
	if err != nil {
		return nil, err
	}
	if !exListy(root) {
		return nil, &SyntaxError{Expr: src, Col: first, Msg: "expected a list, range(...) or list comprehension"}
	}
	return exEvalList(src, root)
}

// exListy reports whether n evaluates to a list: a display, range, comprehension,
// or a concatenation or repetition of those, as in "[1, 2] + list(range(4, 33, 4))".
func exListy(n *exNode) bool {
	switch n.op {
	case exList, exRange, exComp:
		return true
	case exAdd:
		return exListy(n.kids[0]) && exListy(n.kids[1])
	case exMul:
		return exListy(n.kids[0]) != exListy(n.kids[1])
	}
	return false
}

func exEvalList(src string, n *exNode) ([]Value, error) {
	switch n.op {
	case exList:
		return exEvalElems(src, n.kids)
	case exRange:
		return exEvalRange(src, n)
	case exComp:
		return exEvalComp(src, n)
	case exAdd:
		a, err := exEvalList(src, n.kids[0])
		if err != nil {
			return nil, err
		}
		b, err := exEvalList(src, n.kids[1])
		if err != nil {
			return nil, err
		}
		if len(a)+len(b) > exMaxList {
			return nil, exTooLong(src, uint64(len(a))+uint64(len(b)))
		}
		return append(a, b...), nil
	}
	// Repetition: list * int or int * list.
	l, k := n.kids[0], n.kids[1]
	if !exListy(l) {
		l, k = k, l
	}
	a, err := exEvalList(src, l)
	if err != nil {
		return nil, err
	}
	times, err := exEvalConst(src, k)
	if err != nil {
		return nil, err
	}
	if times.Kind != KindInt && times.Kind != KindBool {
		return nil, exRuntimeError(src, exErr("can't multiply sequence by non-int of type '"+exTypeName(times)+"'"))
	}
	if times.I <= 0 || len(a) == 0 {
		return []Value{}, nil
	}
	if times.I > int64(exMaxList/len(a)) {
		return nil, exTooLong(src, uint64(len(a))*uint64(times.I))
	}
	out := make([]Value, 0, len(a)*int(times.I))
	for range times.I {
		out = append(out, a...)
	}
	return out, nil
}

func exTooLong(src string, n uint64) error {
	return errors.New("expression " + strconv.Quote(src) + ": list has " +
		strconv.FormatUint(n, 10) + " values, more than the limit of " + strconv.Itoa(exMaxList))
}

// exCompileIn compiles n with the names in scope (each to its slot), as Compile would.
func exCompileIn(src string, n *exNode, scope map[string]int) (exOperand, error) {
	err := exWalk(n, func(k *exNode) *SyntaxError {
		switch k.op {
		case exComp:
			return &SyntaxError{Expr: src, Col: k.col, Msg: "nested comprehensions are not supported"}
		case exName:
			slot, ok := scope[k.name]
			if !ok {
				return &SyntaxError{Expr: src, Col: k.col, Msg: "unknown name " + strconv.Quote(k.name)}
			}
			k.slot = slot
		}
		return nil
	})
	if err != nil {
		return exOperand{}, err
	}
	return exCompile(src, n)
}

func exEvalConst(src string, n *exNode) (Value, error) {
	op, err := exCompileIn(src, n, nil)
	if err != nil {
		return Value{}, err
	}
	v := op.get(nil)
	if v.Kind == exKindErr {
		return Value{}, exRuntimeError(src, v)
	}
	return v, nil
}

func exEvalElems(src string, elems []*exNode) ([]Value, error) {
	vals := make([]Value, 0, len(elems))
	for _, n := range elems {
		if n.isList() {
			return nil, &SyntaxError{Expr: src, Col: n.col, Msg: "nested lists are not supported"}
		}
		v, err := exEvalConst(src, n)
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
	return vals, nil
}

func exEvalRange(src string, n *exNode) ([]Value, error) {
	args := make([]exOperand, len(n.kids))
	for i, k := range n.kids {
		v, err := exEvalConst(src, k)
		if err != nil {
			return nil, err
		}
		args[i] = exConstOp(v)
	}
	start, stop, step, bad := exRangeArgs(nil, args)
	if bad.Kind == exKindErr {
		return nil, exRuntimeError(src, bad)
	}
	size := exRangeLen(start, stop, step)
	if size > exMaxList {
		return nil, exTooLong(src, size)
	}
	vals := make([]Value, size)
	v := start
	for i := range vals {
		vals[i] = Int(v)
		v += step // may wrap after the last value, which is never used
	}
	return vals, nil
}

func exEvalComp(src string, n *exNode) ([]Value, error) {
	it := n.kids[1]
	if !exListy(it) {
		return nil, &SyntaxError{Expr: src, Col: it.col, Msg: "a comprehension must loop over a list or range(...)"}
	}
	items, err := exEvalList(src, it)
	if err != nil {
		return nil, err
	}
	scope := map[string]int{n.name: 0}
	parts := make([]exOperand, len(n.kids))
	for i, k := range n.kids {
		if i == 1 {
			continue
		}
		if parts[i], err = exCompileIn(src, k, scope); err != nil {
			return nil, err
		}
	}
	vals := make([]Value, 0, len(items))
	env := make([]Value, 1)
next:
	for _, item := range items {
		env[0] = item
		for i := 2; i < len(parts); i++ {
			c := parts[i].get(env)
			if c.Kind == exKindErr {
				return nil, exRuntimeError(src, c)
			}
			if !c.Truth() {
				continue next
			}
		}
		v := parts[0].get(env)
		if v.Kind == exKindErr {
			return nil, exRuntimeError(src, v)
		}
		vals = append(vals, v)
	}
	return vals, nil
}
