package genome

import (
	"errors"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
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

func exBool(b bool) Value {
	var i int64
	if b {
		i = 1
	}
	return Value{Kind: KindBool, I: i}
}

func exLogicFn(op exOpcode, l, r exOperand) exEvalFn {
	if op == exAnd {
		return func(env []Value) Value {
			a := l.get(env)
			if !a.Truth() { // an error value is falsy, so it is returned too
				return a
			}
			return r.get(env)
		}
	}
	return func(env []Value) Value {
		a := l.get(env)
		if a.Truth() || a.Kind == exKindErr {
			return a
		}
		return r.get(env)
	}
}

func exUnaryFn(op exOpcode, x exOperand) exEvalFn {
	if op == exNot {
		return func(env []Value) Value {
			v := x.get(env)
			if v.Kind == exKindErr {
				return v
			}
			return exBool(!v.Truth())
		}
	}
	return func(env []Value) Value { return exUnary(op, x.get(env)) }
}

// exBinaryFn inlines the int-int case of the common operators; everything else,
// including overflow and errors in operands, goes through exArith.
func exBinaryFn(op exOpcode, l, r exOperand) exEvalFn {
	switch op {
	case exAdd:
		return func(env []Value) Value {
			a, b := l.get(env), r.get(env)
			if a.Kind == KindInt && b.Kind == KindInt {
				if s := a.I + b.I; (s > a.I) == (b.I > 0) {
					return Value{Kind: KindInt, I: s}
				}
			}
			return exArith(exAdd, a, b)
		}
	case exSub:
		return func(env []Value) Value {
			a, b := l.get(env), r.get(env)
			if a.Kind == KindInt && b.Kind == KindInt {
				if s := a.I - b.I; (s < a.I) == (b.I > 0) {
					return Value{Kind: KindInt, I: s}
				}
			}
			return exArith(exSub, a, b)
		}
	case exMul:
		return func(env []Value) Value {
			a, b := l.get(env), r.get(env)
			if a.Kind == KindInt && b.Kind == KindInt {
				if p, ok := exMulInt(a.I, b.I); ok {
					return Value{Kind: KindInt, I: p}
				}
			}
			return exArith(exMul, a, b)
		}
	case exMod:
		return func(env []Value) Value {
			a, b := l.get(env), r.get(env)
			if a.Kind == KindInt && b.Kind == KindInt && b.I > 0 {
				m := a.I % b.I
				if m < 0 {
					m += b.I
				}
				return Value{Kind: KindInt, I: m}
			}
			return exArith(exMod, a, b)
		}
	case exFloorDiv:
		return func(env []Value) Value {
			a, b := l.get(env), r.get(env)
			if a.Kind == KindInt && b.Kind == KindInt && b.I > 0 {
				q := a.I / b.I
				if a.I%b.I < 0 {
					q--
				}
				return Value{Kind: KindInt, I: q}
			}
			return exArith(exFloorDiv, a, b)
		}
	}
	return func(env []Value) Value { return exArith(op, l.get(env), r.get(env)) }
}

func exCmpFn(op exOpcode, l, r exOperand) exEvalFn {
	switch op {
	case exLT:
		return func(env []Value) Value {
			a, b := l.get(env), r.get(env)
			if a.Kind == KindInt && b.Kind == KindInt {
				return exBool(a.I < b.I)
			}
			return exCompare(exLT, a, b)
		}
	case exLE:
		return func(env []Value) Value {
			a, b := l.get(env), r.get(env)
			if a.Kind == KindInt && b.Kind == KindInt {
				return exBool(a.I <= b.I)
			}
			return exCompare(exLE, a, b)
		}
	case exGT:
		return func(env []Value) Value {
			a, b := l.get(env), r.get(env)
			if a.Kind == KindInt && b.Kind == KindInt {
				return exBool(a.I > b.I)
			}
			return exCompare(exGT, a, b)
		}
	case exGE:
		return func(env []Value) Value {
			a, b := l.get(env), r.get(env)
			if a.Kind == KindInt && b.Kind == KindInt {
				return exBool(a.I >= b.I)
			}
			return exCompare(exGE, a, b)
		}
	case exEQ:
		return func(env []Value) Value {
			a, b := l.get(env), r.get(env)
			if a.Kind == KindInt && b.Kind == KindInt {
				return exBool(a.I == b.I)
			}
			return exCompare(exEQ, a, b)
		}
	case exNE:
		return func(env []Value) Value {
			a, b := l.get(env), r.get(env)
			if a.Kind == KindInt && b.Kind == KindInt {
				return exBool(a.I != b.I)
			}
			return exCompare(exNE, a, b)
		}
	}
	return func(env []Value) Value { return exCompare(op, l.get(env), r.get(env)) }
}

// exChainFn evaluates a < b <= c as Python does: each middle operand once,
// stopping at the first false comparison.
func exChainFn(cmps []exOpcode, ops []exOperand) exEvalFn {
	return func(env []Value) Value {
		a := ops[0].get(env)
		for i, op := range cmps {
			b := ops[i+1].get(env)
			var r Value
			if a.Kind == KindInt && b.Kind == KindInt {
				r = exBool(exIntCmp(op, a.I, b.I))
			} else {
				r = exCompare(op, a, b)
			}
			if r.Kind == exKindErr || !r.Truth() {
				return r
			}
			a = b
		}
		return exBool(true)
	}
}

func exIntCmp(op exOpcode, x, y int64) bool {
	switch op {
	case exLT:
		return x < y
	case exLE:
		return x <= y
	case exGT:
		return x > y
	case exGE:
		return x >= y
	case exEQ:
		return x == y
	}
	return x != y
}

func exInListFn(x exOperand, elems []exOperand, not bool) exEvalFn {
	allConst := true
	for i := range elems {
		allConst = allConst && elems[i].mode == exModeConst
	}
	return func(env []Value) Value {
		v := x.get(env)
		if v.Kind == exKindErr {
			return v
		}
		found := false
		for i := range elems {
			e := elems[i].get(env)
			if e.Kind == exKindErr {
				return e
			}
			if !found && exEqual(v, e) {
				found = true
				if allConst { // nothing left that could fail
					break
				}
			}
		}
		return exBool(found != not)
	}
}

func exInRangeFn(x exOperand, args []exOperand, not bool) exEvalFn {
	return func(env []Value) Value {
		v := x.get(env)
		if v.Kind == exKindErr {
			return v
		}
		start, stop, step, bad := exRangeArgs(env, args)
		if bad.Kind == exKindErr {
			return bad
		}
		return exBool(exRangeContains(v, start, stop, step) != not)
	}
}

// exRangeArgs evaluates the arguments of range() as Python does.
func exRangeArgs(env []Value, args []exOperand) (start, stop, step int64, bad Value) {
	var n [3]int64
	for i := range args {
		v := args[i].get(env)
		if v.Kind == exKindErr {
			return 0, 0, 0, v
		}
		if v.Kind != KindInt && v.Kind != KindBool {
			return 0, 0, 0, exErr("'" + exTypeName(v) + "' object cannot be interpreted as an integer")
		}
		n[i] = v.I
	}
	switch len(args) {
	case 1:
		return 0, n[0], 1, Value{}
	case 2:
		return n[0], n[1], 1, Value{}
	}
	if n[2] == 0 {
		return 0, 0, 0, exErr("range() arg 3 must not be zero")
	}
	return n[0], n[1], n[2], Value{}
}

func exRangeLen(start, stop, step int64) uint64 {
	if step > 0 {
		if start >= stop {
			return 0
		}
		return (uint64(stop)-uint64(start)-1)/uint64(step) + 1
	}
	if start <= stop {
		return 0
	}
	return (uint64(start)-uint64(stop)-1)/(-uint64(step)) + 1
}

func exRangeContains(v Value, start, stop, step int64) bool {
	var i int64
	switch v.Kind {
	case KindInt, KindBool:
		i = v.I
	case KindFloat: // Python falls back to ==, so only integral floats can match
		if v.F != math.Trunc(v.F) || v.F < -0x1p63 || v.F >= 0x1p63 {
			return false
		}
		i = int64(v.F)
	default:
		return false
	}
	if step > 0 {
		return start <= i && i < stop && (uint64(i)-uint64(start))%uint64(step) == 0
	}
	return stop < i && i <= start && (uint64(start)-uint64(i))%(-uint64(step)) == 0
}

func exMinMaxFn(isMax bool, args []exOperand) exEvalFn {
	op := exLT
	if isMax {
		op = exGT
	}
	return func(env []Value) Value {
		best := args[0].get(env)
		if best.Kind == exKindErr {
			return best
		}
		// Python evaluates every argument before comparing, so an error in a
		// later argument wins over a failed comparison.
		var cmpErr Value
		for i := 1; i < len(args); i++ {
			v := args[i].get(env)
			if v.Kind == exKindErr {
				return v
			}
			if cmpErr.Kind == exKindErr {
				continue
			}
			if r := exCompare(op, v, best); r.Kind == exKindErr {
				cmpErr = r
			} else if r.I != 0 {
				best = v
			}
		}
		if cmpErr.Kind == exKindErr {
			return cmpErr
		}
		return best
	}
}

func exTypeName(v Value) string {
	switch v.Kind {
	case KindInt:
		return "int"
	case KindFloat:
		return "float"
	case KindBool:
		return "bool"
	case KindString:
		return "str"
	}
	return "invalid"
}

func exIsInt(v Value) bool { return v.Kind == KindInt || v.Kind == KindBool }

const (
	exMsgZeroDiv  = "division by zero"
	exMsgOverflow = "integer overflow"
)

func exUnsupported(op exOpcode, a, b Value) Value {
	return exErr("unsupported operand type(s) for " + exOpText[op] + ": '" + exTypeName(a) + "' and '" + exTypeName(b) + "'")
}

// exArith is the general binary arithmetic with Python 3 semantics.
func exArith(op exOpcode, a, b Value) Value {
	if a.Kind == exKindErr {
		return a
	}
	if b.Kind == exKindErr {
		return b
	}
	if exIsInt(a) && exIsInt(b) {
		return exIntArith(op, a, b)
	}
	if a.IsNumber() && b.IsNumber() {
		switch op {
		case exBitAnd, exBitOr, exBitXor, exLsh, exRsh:
			return exUnsupported(op, a, b)
		}
		x, _ := a.Float64()
		y, _ := b.Float64()
		return exFloatArith(op, x, y)
	}
	if a.Kind == KindString || b.Kind == KindString {
		return exStrArith(op, a, b)
	}
	return exUnsupported(op, a, b)
}

func exIntArith(op exOpcode, a, b Value) Value {
	x, y := a.I, b.I
	switch op {
	case exAdd:
		if s := x + y; (s > x) == (y > 0) {
			return Int(s)
		}
	case exSub:
		if s := x - y; (s < x) == (y > 0) {
			return Int(s)
		}
	case exMul:
		if p, ok := exMulInt(x, y); ok {
			return Int(p)
		}
	case exDiv:
		if y == 0 {
			return exErr(exMsgZeroDiv)
		}
		return Float(exTrueDiv(x, y))
	case exFloorDiv:
		if y == 0 {
			return exErr(exMsgZeroDiv)
		}
		if x == math.MinInt64 && y == -1 {
			break
		}
		q := x / y
		if x%y != 0 && (x < 0) != (y < 0) {
			q--
		}
		return Int(q)
	case exMod:
		if y == 0 {
			return exErr(exMsgZeroDiv)
		}
		if y == -1 {
			return Int(0)
		}
		m := x % y
		if m != 0 && (m < 0) != (y < 0) {
			m += y
		}
		return Int(m)
	case exPow:
		if y < 0 {
			return exFloatPow(float64(x), float64(y))
		}
		if p, ok := exPowInt(x, y); ok {
			return Int(p)
		}
	case exBitAnd, exBitOr, exBitXor:
		var r int64
		switch op {
		case exBitAnd:
			r = x & y
		case exBitOr:
			r = x | y
		default:
			r = x ^ y
		}
		if a.Kind == KindBool && b.Kind == KindBool { // bool & bool stays bool
			return Bool(r != 0)
		}
		return Int(r)
	case exLsh:
		if y < 0 {
			return exErr("negative shift count")
		}
		if x == 0 {
			return Int(0)
		}
		if y < 64 {
			if s := x << y; s>>y == x {
				return Int(s)
			}
		}
	case exRsh:
		if y < 0 {
			return exErr("negative shift count")
		}
		return Int(x >> min(y, 63))
	}
	return exErr(exMsgOverflow)
}

func exMulInt(x, y int64) (int64, bool) {
	if uint64(x)+1<<31 < 1<<32 && uint64(y)+1<<31 < 1<<32 {
		return x * y, true // both fit in 32 bits: no overflow, and no slow division below
	}
	if x == 0 || y == 0 {
		return 0, true
	}
	p := x * y
	if (p < 0) != ((x < 0) != (y < 0)) || p/y != x {
		return 0, false
	}
	return p, true
}

// exPowInt computes x**y for y >= 0 by squaring, failing on overflow.
func exPowInt(x, y int64) (int64, bool) {
	r := int64(1)
	var ok bool
	for y > 0 {
		if y&1 != 0 {
			if r, ok = exMulInt(r, x); !ok {
				return 0, false
			}
		}
		y >>= 1
		if y > 0 {
			// Squaring only when another factor remains: if x*x overflows, so does the result.
			if x, ok = exMulInt(x, x); !ok {
				return 0, false
			}
		}
	}
	return r, true
}

// exTrueDiv is int / int correctly rounded, as CPython computes it.
func exTrueDiv(x, y int64) float64 {
	const exact = 1 << 53
	if x == 0 || -exact <= x && x <= exact && -exact <= y && y <= exact {
		return float64(x) / float64(y)
	}
	f, _ := new(big.Rat).SetFrac(big.NewInt(x), big.NewInt(y)).Float64()
	return f
}

func exFloatArith(op exOpcode, x, y float64) Value {
	switch op {
	case exAdd:
		return Float(x + y)
	case exSub:
		return Float(x - y)
	case exMul:
		return Float(x * y)
	case exDiv:
		if y == 0 {
			return exErr(exMsgZeroDiv)
		}
		return Float(x / y)
	case exFloorDiv, exMod:
		if y == 0 {
			return exErr(exMsgZeroDiv)
		}
		if op == exMod && x == math.Trunc(x) && y == math.Trunc(y) && math.Abs(x) <= 1<<53 && math.Abs(y) <= 1<<53 {
			// Integral values, as in "n % (a/b)": the same result as below
			// without math.Mod, which is slow.
			m := int64(x) % int64(y)
			if m != 0 && (m < 0) != (y < 0) {
				m += int64(y)
			}
			if m == 0 {
				return Float(math.Copysign(0, y))
			}
			return Float(float64(m))
		}
		div, mod := exFloatDivmod(x, y)
		if op == exMod {
			return Float(mod)
		}
		return Float(div)
	}
	return exFloatPow(x, y)
}

// exFloatDivmod is CPython's float_divmod.
func exFloatDivmod(vx, wx float64) (floordiv, mod float64) {
	mod = math.Mod(vx, wx)
	div := (vx - mod) / wx
	if mod != 0 {
		if (wx < 0) != (mod < 0) {
			mod += wx
			div -= 1.0
		}
	} else {
		mod = math.Copysign(0, wx)
	}
	if div != 0 {
		floordiv = math.Floor(div)
		if div-floordiv > 0.5 {
			floordiv += 1.0
		}
	} else {
		floordiv = math.Copysign(0, vx/wx)
	}
	return floordiv, mod
}

func exIsOddInteger(f float64) bool { return math.Mod(f, 2) == 1 || math.Mod(f, 2) == -1 }

// exFloatPow is CPython's float_pow: special cases first, then pow, which
// exPowDD and exPowFrac compute correctly rounded as C's pow (almost) is.
func exFloatPow(iv, iw float64) Value {
	switch {
	case iw == 0:
		return Float(1)
	case math.IsNaN(iv):
		return Float(iv)
	case math.IsNaN(iw):
		if iv == 1 {
			return Float(1)
		}
		return Float(iw)
	case math.IsInf(iw, 0):
		iv = math.Abs(iv)
		if iv == 1 {
			return Float(1)
		}
		if (iw > 0) == (iv > 1) {
			return Float(math.Inf(1))
		}
		return Float(0)
	case math.IsInf(iv, 0):
		odd := exIsOddInteger(iw)
		if iw > 0 {
			if odd {
				return Float(iv)
			}
			return Float(math.Abs(iv))
		}
		if odd {
			return Float(math.Copysign(0, iv))
		}
		return Float(0)
	case iv == 0:
		if iw < 0 {
			return exErr("0.0 cannot be raised to a negative power")
		}
		if exIsOddInteger(iw) {
			return Float(iv)
		}
		return Float(0)
	}
	negate := false
	if iv < 0 {
		if iw != math.Floor(iw) {
			return exErr("negative number cannot be raised to a fractional power (result is complex)")
		}
		iv = -iv
		negate = exIsOddInteger(iw)
	}
	var r float64
	switch {
	case iv == 1:
		r = 1
	case iw == math.Trunc(iw) && math.Abs(iw) < 0x1p63:
		r = exPowDD(iv, int64(iw))
	default:
		r = exPowFrac(iv, iw)
	}
	if math.IsInf(r, 0) {
		return exErr("float overflow in **")
	}
	if negate {
		r = -r
	}
	return Float(r)
}

func exStrArith(op exOpcode, a, b Value) Value {
	switch {
	case op == exAdd && a.Kind == KindString && b.Kind == KindString:
		if len(a.S)+len(b.S) > exMaxStr {
			return exErr("string too long")
		}
		return Str(a.S + b.S)
	case op == exMul && a.Kind == KindString && exIsInt(b):
		return exRepeat(a.S, b.I)
	case op == exMul && exIsInt(a) && b.Kind == KindString:
		return exRepeat(b.S, a.I)
	case op == exMod && a.Kind == KindString:
		return exErr("string formatting is not supported")
	}
	return exUnsupported(op, a, b)
}

func exRepeat(s string, n int64) Value {
	if n <= 0 || s == "" {
		return Str("")
	}
	if n > int64(exMaxStr/len(s)) {
		return exErr("string too long")
	}
	return Str(strings.Repeat(s, int(n)))
}

func exUnary(op exOpcode, v Value) Value {
	if v.Kind == exKindErr {
		return v
	}
	switch {
	case exIsInt(v):
		switch op {
		case exNeg:
			if v.I == math.MinInt64 {
				return exErr(exMsgOverflow)
			}
			return Int(-v.I)
		case exPos:
			return Int(v.I)
		case exInvert:
			return Int(^v.I)
		}
	case v.Kind == KindFloat:
		switch op {
		case exNeg:
			return Float(-v.F)
		case exPos:
			return v
		}
	}
	return exErr("bad operand type for unary " + exOpText[op] + ": '" + exTypeName(v) + "'")
}

// exCompare is the general comparison with Python 3 semantics.
func exCompare(op exOpcode, a, b Value) Value {
	if a.Kind == exKindErr {
		return a
	}
	if b.Kind == exKindErr {
		return b
	}
	switch op {
	case exEQ:
		return exBool(exEqual(a, b))
	case exNE:
		return exBool(!exEqual(a, b))
	case exIn, exNotIn:
		if b.Kind != KindString {
			return exErr("argument of type '" + exTypeName(b) + "' is not iterable")
		}
		if a.Kind != KindString {
			return exErr("'in <string>' requires string as left operand, not " + exTypeName(a))
		}
		return exBool(strings.Contains(b.S, a.S) == (op == exIn))
	}
	var c int
	switch {
	case a.IsNumber() && b.IsNumber():
		var ok bool
		if c, ok = exNumCmp(a, b); !ok {
			return exBool(false) // NaN is unordered
		}
	case a.Kind == KindString && b.Kind == KindString:
		c = strings.Compare(a.S, b.S) // UTF-8 byte order is code point order
	default:
		return exErr("'" + exOpText[op] + "' not supported between instances of '" + exTypeName(a) + "' and '" + exTypeName(b) + "'")
	}
	switch op {
	case exLT:
		return exBool(c < 0)
	case exLE:
		return exBool(c <= 0)
	case exGT:
		return exBool(c > 0)
	}
	return exBool(c >= 0)
}

// exEqual is Python's == for our kinds: exact across int, float and bool.
func exEqual(a, b Value) bool {
	if a.IsNumber() && b.IsNumber() {
		c, ok := exNumCmp(a, b)
		return ok && c == 0
	}
	return a.Kind == KindString && b.Kind == KindString && a.S == b.S
}

// exNumCmp compares two numbers exactly; ok is false when a NaN is involved.
func exNumCmp(a, b Value) (c int, ok bool) {
	switch {
	case a.Kind != KindFloat && b.Kind != KindFloat:
		return exSign(a.I, b.I), true
	case a.Kind == KindFloat && b.Kind == KindFloat:
		switch {
		case a.F < b.F:
			return -1, true
		case a.F > b.F:
			return 1, true
		case a.F == b.F:
			return 0, true
		}
		return 0, false
	case a.Kind == KindFloat:
		c, ok := exCmpIntFloat(b.I, a.F)
		return -c, ok
	}
	return exCmpIntFloat(a.I, b.F)
}

func exSign(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// exCmpIntFloat compares i with f without rounding i to a float.
func exCmpIntFloat(i int64, f float64) (int, bool) {
	switch {
	case math.IsNaN(f):
		return 0, false
	case f >= 0x1p63:
		return -1, true
	case f < -0x1p63:
		return 1, true
	}
	t := math.Trunc(f)
	if c := exSign(i, int64(t)); c != 0 {
		return c, true
	}
	switch frac := f - t; {
	case frac > 0:
		return -1, true
	case frac < 0:
		return 1, true
	}
	return 0, true
}

func exAbs(v Value) Value {
	switch {
	case exIsInt(v):
		if v.I == math.MinInt64 {
			return exErr(exMsgOverflow)
		}
		if v.I < 0 {
			return Int(-v.I)
		}
		return Int(v.I)
	case v.Kind == KindFloat:
		return Float(math.Abs(v.F))
	}
	return exErr("bad operand type for abs(): '" + exTypeName(v) + "'")
}

// exFloatToInt truncates like int(float), or rounds half to even like round(float).
func exFloatToInt(f float64, round bool) Value {
	switch {
	case math.IsNaN(f):
		return exErr("cannot convert float NaN to integer")
	case math.IsInf(f, 0):
		return exErr("cannot convert float infinity to integer")
	}
	if round {
		f = math.RoundToEven(f)
	} else {
		f = math.Trunc(f)
	}
	if f < -0x1p63 || f >= 0x1p63 {
		return exErr(exMsgOverflow)
	}
	return Int(int64(f))
}

func exToInt(v Value) Value {
	switch {
	case exIsInt(v):
		return Int(v.I)
	case v.Kind == KindFloat:
		return exFloatToInt(v.F, false)
	case v.Kind == KindString:
		s := strings.TrimSpace(v.S)
		digits := strings.TrimLeft(s, "+-")
		if len(s)-len(digits) <= 1 && exUnderscoredDigits(digits) {
			n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
			if err != nil {
				return exErr(exMsgOverflow)
			}
			return Int(n)
		}
		return exErr("invalid literal for int() with base 10: " + exRepr(v.S))
	}
	return exErr("int() argument must be a string or a number, not '" + exTypeName(v) + "'")
}

// exUnderscoredDigits reports whether s is digit (["_"] digit)*.
func exUnderscoredDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch {
		case exIsDigit(s[i]):
		case s[i] == '_' && i > 0 && i+1 < len(s) && exIsDigit(s[i-1]) && exIsDigit(s[i+1]):
		default:
			return false
		}
	}
	return true
}

func exToFloat(v Value) Value {
	switch {
	case exIsInt(v):
		return Float(float64(v.I))
	case v.Kind == KindFloat:
		return v
	case v.Kind == KindString:
		s := strings.TrimSpace(v.S)
		body := strings.TrimLeft(s, "+-")
		lower := strings.ToLower(body)
		ok := len(s)-len(body) <= 1
		switch lower {
		case "inf", "infinity", "nan":
		default:
			// Python accepts digits with single underscores between them, never hex.
			ok = ok && body != "" && strings.Trim(lower, "0123456789._e+-") == "" &&
				!strings.Contains(body, "__") && body[0] != '_' && body[len(body)-1] != '_'
			for i := 1; ok && i+1 < len(body); i++ {
				if body[i] == '_' {
					ok = exIsDigit(body[i-1]) && exIsDigit(body[i+1])
				}
			}
		}
		if ok {
			f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
			if !errors.Is(err, strconv.ErrSyntax) {
				return Float(f)
			}
		}
		return exErr("could not convert string to float: " + exRepr(v.S))
	}
	return exErr("float() argument must be a string or a number, not '" + exTypeName(v) + "'")
}

func exRound(v Value) Value {
	switch {
	case exIsInt(v):
		return Int(v.I)
	case v.Kind == KindFloat:
		return exFloatToInt(v.F, true)
	}
	return exErr("type " + exTypeName(v) + " doesn't define __round__ method")
}

// exRepr quotes s roughly as Python's repr does, for error messages.
func exRepr(s string) string {
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	return strconv.Quote(s)
}

// exPowDD computes x**n for finite x > 0, correctly rounded in practice: Go's
// math.Pow can be an ulp or two off where C's pow, which CPython uses, is not.
// It squares in double-double arithmetic with the binary exponent kept apart,
// so nothing overflows or underflows on the way.
func exPowDD(x float64, n int64) float64 {
	const limit = 1 << 16 // far beyond float64's exponent range
	neg := n < 0
	u := uint64(n)
	if neg {
		u = -u
	}
	bm, be := math.Frexp(x)
	b := exDD{hi: bm}
	r, re := exDD{hi: 1}, 0
	for u > 0 {
		if u&1 != 0 {
			r = r.mul(b)
			re += be
			r, re = r.norm(re)
		}
		u >>= 1
		if u > 0 {
			b = b.mul(b)
			be *= 2
			b, be = b.norm(be)
			if be > limit || be < -limit {
				re = be // the result is at least as far out
				break
			}
		}
	}
	if neg {
		r, re = r.recip(), -re
		r, re = r.norm(re)
	}
	switch {
	case re > limit:
		return math.Inf(1)
	case re < -limit:
		return 0
	}
	return exLdexpDD(r, re)
}

// exLdexpDD rounds r * 2**e to a float64 once.
func exLdexpDD(r exDD, e int) float64 {
	f := math.Ldexp(r.hi+r.lo, e)
	if math.Abs(f) >= 0x1p-1022 || e < -1200 {
		return f
	}
	// Subnormal: Ldexp would round a second time, so round once exactly.
	z := new(big.Float).SetPrec(200).SetFloat64(r.hi)
	z.Add(z, new(big.Float).SetFloat64(r.lo))
	f, _ = z.SetMantExp(z, e).Float64()
	return f
}

// exPowFrac computes x**y for finite x > 0, x != 1 and finite non-integer y
// as exp(y*log(x)) in double-double arithmetic, so that the result is
// correctly rounded in practice, as C's pow is; math.Pow is often an ulp off
// (32 ** 1.5, for one).
func exPowFrac(x, y float64) float64 {
	z := exLogDD(x).mulF(y)
	switch {
	case z.hi > 710:
		return math.Inf(1)
	case z.hi < -746:
		return 0
	}
	e, n := exExpDD(z)
	return exLdexpDD(e, n)
}

// ln 2 as a double-double.
var exLn2 = exDD{0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56}

// exInvFact[k] is 1/k! as a double-double.
var exInvFact = func() (c [13]exDD) {
	f := 1.0
	for k := range c {
		if k > 0 {
			f *= float64(k) // exact: 12! < 2**53
		}
		c[k] = exDD{hi: f}.recip()
	}
	return c
}()

// exExpDD returns exp(a) as r * 2**n.
func exExpDD(a exDD) (r exDD, n int) {
	k := math.Round(a.hi / exLn2.hi)
	red := a.add(exLn2.mulF(-k)) // |red| <= 0.35
	s := exDD{math.Ldexp(red.hi, -5), math.Ldexp(red.lo, -5)}
	// Taylor series of exp(s) for |s| < 0.011, then squared five times.
	r = exInvFact[len(exInvFact)-1]
	for i := len(exInvFact) - 2; i >= 0; i-- {
		r = r.mul(s).add(exInvFact[i])
	}
	for range 5 {
		r = r.mul(r)
	}
	return r, int(k)
}

// exLogDD returns log(x) for finite x > 0 as a double-double: math.Log, then
// one Newton step computed in double-double.
func exLogDD(x float64) exDD {
	m, k := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m, k = m*2, k-1
	}
	l0 := math.Log(m)
	e, n := exExpDD(exDD{hi: -l0})
	e = exDD{math.Ldexp(e.hi, n), math.Ldexp(e.lo, n)}
	t := e.mulF(m).add(exDD{hi: -1}) // m*exp(-l0) - 1, tiny
	lm := exDD{hi: l0}.add(t).add(exDD{hi: -t.hi * t.hi / 2})
	return exLn2.mulF(float64(k)).add(lm)
}

// exDD is an unevaluated sum hi+lo with |lo| <= ulp(hi)/2.
type exDD struct{ hi, lo float64 }

func (a exDD) mul(b exDD) exDD {
	p := a.hi * b.hi
	e := math.FMA(a.hi, b.hi, -p) + (a.hi*b.lo + a.lo*b.hi)
	hi := p + e
	return exDD{hi, e - (hi - p)}
}

func (a exDD) mulF(b float64) exDD {
	p := a.hi * b
	e := math.FMA(a.hi, b, -p) + a.lo*b
	hi := p + e
	return exDD{hi, e - (hi - p)}
}

func (a exDD) add(b exDD) exDD {
	s := a.hi + b.hi
	bb := s - a.hi
	e := (a.hi - (s - bb)) + (b.hi - bb) + a.lo + b.lo
	hi := s + e
	return exDD{hi, e - (hi - s)}
}

func (a exDD) recip() exDD {
	q := 1 / a.hi
	rem := math.FMA(-q, a.hi, 1) - q*a.lo
	q2 := rem / a.hi
	hi := q + q2
	return exDD{hi, q2 - (hi - q)}
}

// norm rescales a so that |hi| is in [0.5, 1), moving the scale into e.
func (a exDD) norm(e int) (exDD, int) {
	m, k := math.Frexp(a.hi)
	return exDD{m, math.Ldexp(a.lo, -k)}, e + k
}

// The fast path. Tuning constraints almost always see int parameters only, and
// then every node's kind is known when compiling. The fast compiler builds a
// second tree for that case whose closures return a bare int64 or float64
// instead of a Value, and are specialised for name and constant operands. Any
// surprise at run time (a non-int parameter, an error, an overflow, int ** a
// negative power) makes it bail out, and Eval runs the general tree, which
// gives the Python result or error; both trees are pure, so that is safe.

type exType uint8

const (
	exTyInt   exType = iota + 1
	exTyBool         // held as 0 or 1
	exTyMixed        // an int or a bool, known only at run time ("a or True")
	exTyFloat
)

func (t exType) isInt() bool { return t != exTyFloat } // int, bool or mixed: held in an int64

type exIntFn func(env []Value) (int64, bool)
type exFloatFn func(env []Value) (float64, bool)

// exFast is a node of the fast tree; ok results false mean "bail out".
type exFast struct {
	typ  exType
	mode uint8 // exModeSlot (an int parameter), exModeConst or exModeFn
	slot int
	i    int64
	f    float64
	ifn  exIntFn   // typ.isInt()
	ffn  exFloatFn // typ == exTyFloat
}

func (o *exFast) getI(env []Value) (int64, bool) {
	switch o.mode {
	case exModeSlot:
		v := &env[o.slot]
		return v.I, v.Kind == KindInt
	case exModeConst:
		return o.i, true
	}
	return o.ifn(env)
}

func (o *exFast) getF(env []Value) (float64, bool) {
	if o.typ.isInt() {
		i, ok := o.getI(env)
		return float64(i), ok
	}
	if o.mode == exModeConst {
		return o.f, true
	}
	return o.ffn(env)
}

// num returns the operand as an int or float Value, for the slower mixed cases.
func (o *exFast) num(env []Value) (Value, bool) {
	if o.typ.isInt() {
		i, ok := o.getI(env)
		return Int(i), ok
	}
	f, ok := o.getF(env)
	return Float(f), ok
}

func exFastConst(v Value) (exFast, bool) {
	switch v.Kind {
	case KindInt:
		return exFast{typ: exTyInt, mode: exModeConst, i: v.I}, true
	case KindBool:
		return exFast{typ: exTyBool, mode: exModeConst, i: v.I}, true
	case KindFloat:
		return exFast{typ: exTyFloat, mode: exModeConst, f: v.F}, true
	}
	return exFast{}, false
}

func exFastInt(typ exType, fn exIntFn) exFast     { return exFast{typ: typ, ifn: fn} }
func exFastFloat(fn exFloatFn) exFast             { return exFast{typ: exTyFloat, ffn: fn} }
func exB2I(b bool) int64                          { return exBool(b).I }
func exFastResult(v Value) (int64, float64, bool) { return v.I, v.F, v.Kind != exKindErr }

// exUnify is the kind of an operator that returns one of its operands.
func exUnify(ts ...exType) (exType, bool) {
	t := ts[0]
	for _, u := range ts[1:] {
		switch {
		case u == t:
		case u.isInt() && t.isInt():
			t = exTyMixed
		default:
			return 0, false
		}
	}
	return t, true
}

// exFastCompile builds the fast tree for n, after the general compiler has
// resolved names and folded constants; ok is false when n has no fast form.
func exFastCompile(n *exNode) (exFast, bool) {
	if n.folded || n.op == exConst {
		return exFastConst(n.val)
	}
	switch n.op {
	case exName:
		return exFast{typ: exTyInt, mode: exModeSlot, slot: n.slot}, true
	case exAnd, exOr, exCond:
		return exFastPick(n)
	case exNot, exNeg, exPos, exInvert:
		x, ok := exFastCompile(n.kids[0])
		if !ok {
			return exFast{}, false
		}
		return exFastUnary(n.op, x)
	case exChain:
		return exFastChain(n)
	case exCall:
		return exFastCall(n)
	case exBitOr, exBitXor, exBitAnd, exLsh, exRsh, exAdd, exSub, exMul, exDiv, exFloorDiv, exMod, exPow:
		l, ok1 := exFastCompile(n.kids[0])
		r, ok2 := exFastCompile(n.kids[1])
		if !ok1 || !ok2 {
			return exFast{}, false
		}
		return exFastBinary(n.op, l, r)
	}
	return exFast{}, false
}

func exFastAll(ns []*exNode) ([]exFast, bool) {
	fs := make([]exFast, len(ns))
	for i, n := range ns {
		var ok bool
		if fs[i], ok = exFastCompile(n); !ok {
			return nil, false
		}
	}
	return fs, true
}

func exFastBinary(op exOpcode, l, r exFast) (exFast, bool) {
	bothInt := l.typ.isInt() && r.typ.isInt()
	switch op {
	case exBitAnd, exBitOr, exBitXor:
		if !bothInt {
			return exFast{}, false
		}
		typ := exTyMixed // bool & bool is a bool
		switch {
		case l.typ == exTyBool && r.typ == exTyBool:
			typ = exTyBool
		case l.typ == exTyInt || r.typ == exTyInt:
			typ = exTyInt
		}
		return exFastInt(typ, exFastIntBin(op, l, r)), true
	case exLsh, exRsh:
		if !bothInt {
			return exFast{}, false
		}
	case exDiv:
		if bothInt {
			return exFastFloat(func(env []Value) (float64, bool) {
				a, ok := l.getI(env)
				if !ok {
					return 0, false
				}
				b, ok := r.getI(env)
				if !ok || b == 0 {
					return 0, false
				}
				return exTrueDiv(a, b), true
			}), true
		}
	}
	if bothInt {
		return exFastInt(exTyInt, exFastIntBin(op, l, r)), true
	}
	return exFastFloat(func(env []Value) (float64, bool) {
		x, ok := l.getF(env)
		if !ok {
			return 0, false
		}
		y, ok := r.getF(env)
		if !ok {
			return 0, false
		}
		_, f, ok := exFastResult(exFloatArith(op, x, y))
		return f, ok
	}), true
}

// exIntOp applies a binary operator to ints, or reports that the fast path
// cannot: errors, overflow and int ** negative power (a float) all bail.
func exIntOp(op exOpcode, a, b int64) (int64, bool) {
	switch op {
	case exAdd:
		s := a + b
		return s, (s > a) == (b > 0)
	case exSub:
		s := a - b
		return s, (s < a) == (b > 0)
	case exMul:
		return exMulInt(a, b)
	case exFloorDiv:
		if b == 0 || b == -1 && a == math.MinInt64 {
			return 0, false
		}
		q := a / b
		if a%b != 0 && (a < 0) != (b < 0) {
			q--
		}
		return q, true
	case exMod:
		if b == 0 {
			return 0, false
		}
		if b == -1 {
			return 0, true
		}
		m := a % b
		if m != 0 && (m < 0) != (b < 0) {
			m += b
		}
		return m, true
	case exPow:
		if b < 0 {
			return 0, false
		}
		return exPowInt(a, b)
	case exBitAnd:
		return a & b, true
	case exBitOr:
		return a | b, true
	case exBitXor:
		return a ^ b, true
	case exLsh:
		if b < 0 || b >= 64 {
			return 0, a == 0 && b >= 0
		}
		s := a << b
		return s, s>>b == a
	case exRsh:
		if b < 0 {
			return 0, false // Go panics on a negative shift
		}
		return a >> min(b, 63), true
	case exLT:
		return exB2I(a < b), true
	case exLE:
		return exB2I(a <= b), true
	case exGT:
		return exB2I(a > b), true
	case exGE:
		return exB2I(a >= b), true
	case exEQ:
		return exB2I(a == b), true
	case exNE:
		return exB2I(a != b), true
	}
	return 0, false
}

// exFastIntBin specialises on where the operands come from: reading a
// parameter or a constant inline instead of calling a closure is most of the
// fast path's gain.
func exFastIntBin(op exOpcode, l, r exFast) exIntFn {
	const slot, cnst, fn = exModeSlot, exModeConst, exModeFn
	switch [2]uint8{l.mode, r.mode} {
	case [2]uint8{slot, slot}:
		i, j := l.slot, r.slot
		return func(env []Value) (int64, bool) {
			a, b := &env[i], &env[j]
			if a.Kind != KindInt || b.Kind != KindInt {
				return 0, false
			}
			return exIntOp(op, a.I, b.I)
		}
	case [2]uint8{slot, cnst}:
		i, y := l.slot, r.i
		return func(env []Value) (int64, bool) {
			a := &env[i]
			if a.Kind != KindInt {
				return 0, false
			}
			return exIntOp(op, a.I, y)
		}
	case [2]uint8{cnst, slot}:
		x, j := l.i, r.slot
		return func(env []Value) (int64, bool) {
			b := &env[j]
			if b.Kind != KindInt {
				return 0, false
			}
			return exIntOp(op, x, b.I)
		}
	case [2]uint8{fn, fn}:
		f, g := l.ifn, r.ifn
		return func(env []Value) (int64, bool) {
			a, ok := f(env)
			if !ok {
				return 0, false
			}
			b, ok := g(env)
			if !ok {
				return 0, false
			}
			return exIntOp(op, a, b)
		}
	case [2]uint8{fn, cnst}:
		f, y := l.ifn, r.i
		return func(env []Value) (int64, bool) {
			a, ok := f(env)
			if !ok {
				return 0, false
			}
			return exIntOp(op, a, y)
		}
	case [2]uint8{cnst, fn}:
		x, g := l.i, r.ifn
		return func(env []Value) (int64, bool) {
			b, ok := g(env)
			if !ok {
				return 0, false
			}
			return exIntOp(op, x, b)
		}
	case [2]uint8{fn, slot}:
		f, j := l.ifn, r.slot
		return func(env []Value) (int64, bool) {
			a, ok := f(env)
			if !ok {
				return 0, false
			}
			b := &env[j]
			if b.Kind != KindInt {
				return 0, false
			}
			return exIntOp(op, a, b.I)
		}
	case [2]uint8{slot, fn}:
		i, g := l.slot, r.ifn
		return func(env []Value) (int64, bool) {
			a := &env[i]
			if a.Kind != KindInt {
				return 0, false
			}
			b, ok := g(env)
			if !ok {
				return 0, false
			}
			return exIntOp(op, a.I, b)
		}
	}
	return func(env []Value) (int64, bool) { // two constants that did not fold
		a, ok := l.getI(env)
		if !ok {
			return 0, false
		}
		b, ok := r.getI(env)
		if !ok {
			return 0, false
		}
		return exIntOp(op, a, b)
	}
}

func exFastUnary(op exOpcode, x exFast) (exFast, bool) {
	if op == exNot {
		if x.typ.isInt() {
			return exFastInt(exTyBool, func(env []Value) (int64, bool) {
				a, ok := x.getI(env)
				return exB2I(a == 0), ok
			}), true
		}
		return exFastInt(exTyBool, func(env []Value) (int64, bool) {
			a, ok := x.getF(env)
			return exB2I(a == 0), ok
		}), true
	}
	if !x.typ.isInt() {
		switch op {
		case exNeg:
			return exFastFloat(func(env []Value) (float64, bool) {
				a, ok := x.getF(env)
				return -a, ok
			}), true
		case exPos:
			return x, true
		}
		return exFast{}, false
	}
	switch op {
	case exNeg:
		return exFastInt(exTyInt, func(env []Value) (int64, bool) {
			a, ok := x.getI(env)
			return -a, ok && a != math.MinInt64
		}), true
	case exPos:
		if x.typ == exTyInt {
			return x, true
		}
		return exFastInt(exTyInt, x.getI), true
	}
	return exFastInt(exTyInt, func(env []Value) (int64, bool) {
		a, ok := x.getI(env)
		return ^a, ok
	}), true
}

// exFastPick compiles and, or and the conditional expression.
func exFastPick(n *exNode) (exFast, bool) {
	ks, ok := exFastAll(n.kids)
	if !ok {
		return exFast{}, false
	}
	if n.op == exCond {
		t, cond, f := ks[0], ks[1], ks[2]
		if cond.mode == exModeConst { // as the general compiler does
			if cond.i != 0 || cond.f != 0 {
				return t, true
			}
			return f, true
		}
		typ, ok := exUnify(t.typ, f.typ)
		if !ok {
			return exFast{}, false
		}
		truth := exFastTruth(cond)
		if typ == exTyFloat {
			return exFastFloat(func(env []Value) (float64, bool) {
				c, ok := truth(env)
				if !ok {
					return 0, false
				}
				if c {
					return t.getF(env)
				}
				return f.getF(env)
			}), true
		}
		return exFastInt(typ, func(env []Value) (int64, bool) {
			c, ok := truth(env)
			if !ok {
				return 0, false
			}
			if c {
				return t.getI(env)
			}
			return f.getI(env)
		}), true
	}
	l, r := ks[0], ks[1]
	if l.mode == exModeConst {
		if (l.i != 0 || l.f != 0) == (n.op == exAnd) {
			return r, true
		}
		return l, true
	}
	typ, ok := exUnify(l.typ, r.typ)
	if !ok {
		return exFast{}, false
	}
	and := n.op == exAnd
	if typ == exTyFloat {
		return exFastFloat(func(env []Value) (float64, bool) {
			a, ok := l.getF(env)
			if !ok || (a != 0) != and {
				return a, ok
			}
			return r.getF(env)
		}), true
	}
	return exFastInt(typ, func(env []Value) (int64, bool) {
		a, ok := l.getI(env)
		if !ok || (a != 0) != and {
			return a, ok
		}
		return r.getI(env)
	}), true
}

func exFastTruth(x exFast) func(env []Value) (bool, bool) {
	if x.typ.isInt() {
		return func(env []Value) (bool, bool) {
			a, ok := x.getI(env)
			return a != 0, ok
		}
	}
	return func(env []Value) (bool, bool) {
		a, ok := x.getF(env)
		return a != 0, ok
	}
}

func exFastChain(n *exNode) (exFast, bool) {
	last := n.kids[len(n.kids)-1]
	if last.op == exList || last.op == exRange {
		return exFastIn(n)
	}
	if slices.Contains(n.cmps, exIn) || slices.Contains(n.cmps, exNotIn) {
		return exFast{}, false // substring tests, or type errors
	}
	ops, ok := exFastAll(n.kids)
	if !ok {
		return exFast{}, false
	}
	allInt := true
	for _, o := range ops {
		allInt = allInt && o.typ.isInt()
	}
	if len(ops) == 2 {
		if allInt {
			return exFastInt(exTyBool, exFastIntBin(n.cmps[0], ops[0], ops[1])), true
		}
		op, l, r := n.cmps[0], ops[0], ops[1]
		if exExactFloat(l) && exExactFloat(r) {
			return exFastInt(exTyBool, func(env []Value) (int64, bool) {
				a, ok := l.getF(env)
				if !ok {
					return 0, false
				}
				b, ok := r.getF(env)
				return exB2I(exFloatCmp(op, a, b)), ok
			}), true
		}
		return exFastInt(exTyBool, func(env []Value) (int64, bool) {
			a, ok := l.num(env)
			if !ok {
				return 0, false
			}
			b, ok := r.num(env)
			if !ok {
				return 0, false
			}
			return exCompare(op, a, b).I, true
		}), true
	}
	cmps := n.cmps
	if allInt {
		return exFastInt(exTyBool, func(env []Value) (int64, bool) {
			a, ok := ops[0].getI(env)
			if !ok {
				return 0, false
			}
			for i, op := range cmps {
				b, ok := ops[i+1].getI(env)
				if !ok {
					return 0, false
				}
				if r, _ := exIntOp(op, a, b); r == 0 {
					return 0, true
				}
				a = b
			}
			return 1, true
		}), true
	}
	return exFastInt(exTyBool, func(env []Value) (int64, bool) {
		a, ok := ops[0].num(env)
		if !ok {
			return 0, false
		}
		for i, op := range cmps {
			b, ok := ops[i+1].num(env)
			if !ok {
				return 0, false
			}
			if exCompare(op, a, b).I == 0 {
				return 0, true
			}
			a = b
		}
		return 1, true
	}), true
}

// exExactFloat reports whether o converts to a float64 without rounding, so
// that comparing it as a float is exact.
func exExactFloat(o exFast) bool {
	return o.typ == exTyFloat || o.mode == exModeConst && o.i >= -1<<53 && o.i <= 1<<53
}

// exFloatCmp compares as Python does; NaN is unordered in both languages.
func exFloatCmp(op exOpcode, a, b float64) bool {
	switch op {
	case exLT:
		return a < b
	case exLE:
		return a <= b
	case exGT:
		return a > b
	case exGE:
		return a >= b
	case exEQ:
		return a == b
	}
	return a != b
}

// exFastIn compiles "x in [...]" and "x in range(...)".
func exFastIn(n *exNode) (exFast, bool) {
	last := n.kids[len(n.kids)-1]
	x, ok1 := exFastCompile(n.kids[0])
	elems, ok2 := exFastAll(last.kids)
	if !ok1 || !ok2 {
		return exFast{}, false
	}
	not := n.cmps[0] == exNotIn
	if last.op == exRange {
		for _, e := range elems {
			if !e.typ.isInt() {
				return exFast{}, false
			}
		}
		return exFastInt(exTyBool, func(env []Value) (int64, bool) {
			v, ok := x.num(env)
			if !ok {
				return 0, false
			}
			var a [3]int64
			for i := range elems {
				if a[i], ok = elems[i].getI(env); !ok {
					return 0, false
				}
			}
			start, stop, step := int64(0), a[0], int64(1)
			if len(elems) > 1 {
				start, stop = a[0], a[1]
			}
			if len(elems) > 2 {
				if step = a[2]; step == 0 {
					return 0, false
				}
			}
			return exB2I(exRangeContains(v, start, stop, step) != not), true
		}), true
	}
	return exFastInt(exTyBool, func(env []Value) (int64, bool) {
		v, ok := x.num(env)
		if !ok {
			return 0, false
		}
		found := false
		for i := range elems { // all of them, as Python builds the list first
			e, ok := elems[i].num(env)
			if !ok {
				return 0, false
			}
			found = found || exEqual(v, e)
		}
		return exB2I(found != not), true
	}), true
}

func exFastCall(n *exNode) (exFast, bool) {
	args := n.kids
	if (n.name == "min" || n.name == "max") && len(args) == 1 {
		args = args[0].kids
	}
	xs, ok := exFastAll(args)
	if !ok || len(xs) == 0 {
		return exFast{}, false
	}
	x := xs[0]
	switch n.name {
	case "min", "max":
		typ, ok := exUnify(exTypes(xs)...)
		if !ok {
			return exFast{}, false
		}
		// Python keeps the first of equal values, and compares a new value v
		// with the best so far as v < best (min) or v > best (max).
		isMax := n.name == "max"
		if typ == exTyFloat {
			return exFastFloat(func(env []Value) (float64, bool) {
				best, ok := xs[0].getF(env)
				for i := 1; ok && i < len(xs); i++ {
					var v float64
					v, ok = xs[i].getF(env)
					if isMax && v > best || !isMax && v < best {
						best = v
					}
				}
				return best, ok
			}), true
		}
		return exFastInt(typ, func(env []Value) (int64, bool) {
			best, ok := xs[0].getI(env)
			for i := 1; ok && i < len(xs); i++ {
				var v int64
				v, ok = xs[i].getI(env)
				if isMax && v > best || !isMax && v < best {
					best = v
				}
			}
			return best, ok
		}), true
	case "bool":
		return exFastInt(exTyBool, func(env []Value) (int64, bool) {
			t, ok := exFastTruth(x)(env)
			return exB2I(t), ok
		}), true
	case "float":
		return exFastFloat(x.getF), true
	}
	if x.typ.isInt() {
		switch n.name {
		case "abs":
			return exFastInt(exTyInt, func(env []Value) (int64, bool) {
				a, ok := x.getI(env)
				if a < 0 {
					a = -a
				}
				return a, ok && a != math.MinInt64
			}), true
		case "int", "round":
			return exFastInt(exTyInt, x.getI), true
		}
		return exFast{}, false
	}
	switch n.name {
	case "abs":
		return exFastFloat(func(env []Value) (float64, bool) {
			a, ok := x.getF(env)
			return math.Abs(a), ok
		}), true
	case "int", "round":
		round := n.name == "round"
		return exFastInt(exTyInt, func(env []Value) (int64, bool) {
			a, ok := x.getF(env)
			if !ok {
				return 0, false
			}
			i, _, ok := exFastResult(exFloatToInt(a, round))
			return i, ok
		}), true
	}
	return exFast{}, false
}

func exTypes(xs []exFast) []exType {
	ts := make([]exType, len(xs))
	for i, x := range xs {
		ts[i] = x.typ
	}
	return ts
}
