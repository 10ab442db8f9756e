package genome

// This file compiles the exNode tree into the general tree of exOperands,
// folding constant sub-expressions and constant conditions as it goes.

type exEvalFn func(env []Value) Value

const (
	exModeFn uint8 = iota
	exModeConst
	exModeSlot
)

// exOperand is a compiled sub-expression. Constants and names are read inline
// rather than through a closure call, which roughly halves the calls per Eval.
type exOperand struct {
	mode uint8
	slot int
	c    Value
	fn   exEvalFn
}

func (o *exOperand) get(env []Value) Value {
	switch o.mode {
	case exModeSlot:
		return env[o.slot]
	case exModeConst:
		return o.c
	}
	return o.fn(env)
}

func exConstOp(v Value) exOperand { return exOperand{mode: exModeConst, c: v} }

// exFold turns fn into a constant when all its operands are constant and it
// evaluates without error; an error stays a runtime error, so "0 and 1/0" and
// "a or 1/0" still compile.
func exFold(fn exEvalFn, kids ...exOperand) exOperand {
	for i := range kids {
		if kids[i].mode != exModeConst {
			return exOperand{fn: fn}
		}
	}
	if v := fn(nil); v.Kind != exKindErr {
		return exConstOp(v)
	}
	return exOperand{fn: fn}
}

func exCompile(src string, root *exNode) (op exOperand, err error) {
	defer exCatch(&err)
	return (&exCompiler{src: src}).compile(root), nil
}

type exCompiler struct{ src string }

func (c *exCompiler) fail(col int, msg string) { exFail(c.src, col, msg) }

func (c *exCompiler) compileAll(ns []*exNode) []exOperand {
	ops := make([]exOperand, len(ns))
	for i, n := range ns {
		ops[i] = c.compile(n)
	}
	return ops
}

func (c *exCompiler) compile(n *exNode) exOperand {
	op := c.compileNode(n)
	if op.mode == exModeConst {
		n.folded, n.val = true, op.c
	}
	return op
}

func (c *exCompiler) compileNode(n *exNode) exOperand {
	switch n.op {
	case exConst:
		return exConstOp(n.val)
	case exName:
		return exOperand{mode: exModeSlot, slot: n.slot}
	case exList, exRange, exComp:
		c.fail(n.col, `a list is only supported after "in" or as the argument of min() or max()`)
	case exAnd, exOr:
		l, r := c.compile(n.kids[0]), c.compile(n.kids[1])
		if l.mode == exModeConst {
			if l.c.Truth() == (n.op == exAnd) {
				return r
			}
			return l
		}
		return exOperand{fn: exLogicFn(n.op, l, r)}
	case exCond:
		t, cond, f := c.compile(n.kids[0]), c.compile(n.kids[1]), c.compile(n.kids[2])
		if cond.mode == exModeConst {
			if cond.c.Truth() {
				return t
			}
			return f
		}
		return exOperand{fn: func(env []Value) Value {
			v := cond.get(env)
			if v.Kind == exKindErr {
				return v
			}
			if v.Truth() {
				return t.get(env)
			}
			return f.get(env)
		}}
	case exNot, exNeg, exPos, exInvert:
		x := c.compile(n.kids[0])
		return exFold(exUnaryFn(n.op, x), x)
	case exChain:
		return c.compare(n)
	case exCall:
		return c.call(n)
	default: // binary arithmetic
		l, r := c.compile(n.kids[0]), c.compile(n.kids[1])
		return exFold(exBinaryFn(n.op, l, r), l, r)
	}
	panic("unreachable")
}

func (c *exCompiler) compare(n *exNode) exOperand {
	last := n.kids[len(n.kids)-1]
	if cmp := n.cmps[len(n.cmps)-1]; (last.op == exList || last.op == exRange) && (cmp == exIn || cmp == exNotIn) {
		if len(n.cmps) > 1 {
			c.fail(n.col, "a chained comparison cannot end in a list")
		}
		x := c.compile(n.kids[0])
		elems := c.compileAll(last.kids)
		var fn exEvalFn
		if last.op == exList {
			fn = exInListFn(x, elems, cmp == exNotIn)
		} else {
			fn = exInRangeFn(x, elems, cmp == exNotIn)
		}
		return exFold(fn, append(elems, x)...)
	}
	ops := c.compileAll(n.kids)
	if len(ops) == 2 {
		return exFold(exCmpFn(n.cmps[0], ops[0], ops[1]), ops...)
	}
	return exFold(exChainFn(n.cmps, ops), ops...)
}

func (c *exCompiler) call(n *exNode) exOperand {
	args := n.kids
	switch n.name {
	case "min", "max":
		if len(args) == 1 {
			args = args[0].kids // a list or tuple, checked by the parser
			if len(args) == 0 {
				msg := n.name + "() arg is an empty sequence"
				return exOperand{fn: func([]Value) Value { return exErr(msg) }}
			}
		}
		ops := c.compileAll(args)
		return exFold(exMinMaxFn(n.name == "max", ops), ops...)
	}
	if len(args) == 0 {
		switch n.name {
		case "int":
			return exConstOp(Int(0))
		case "float":
			return exConstOp(Float(0))
		case "bool":
			return exConstOp(Bool(false))
		default:
			return exConstOp(Str(""))
		}
	}
	var f func(Value) Value
	switch n.name {
	case "abs":
		f = exAbs
	case "int":
		f = exToInt
	case "float":
		f = exToFloat
	case "round":
		f = exRound
	case "bool":
		f = func(v Value) Value { return Bool(v.Truth()) }
	case "str":
		f = func(v Value) Value { return Str(v.String()) }
	}
	x := c.compile(args[0])
	return exFold(func(env []Value) Value {
		v := x.get(env)
		if v.Kind == exKindErr {
			return v
		}
		return f(v)
	}, x)
}
