package genome

import (
	"errors"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

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
	src   string
	root  exOperand
	need  int // len(env) that Eval requires
	slots []int
	names []string
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
	v := e.root.get(env)
	if v.Kind == exKindErr {
		return Value{}, exRuntimeError(e.src, v)
	}
	return v, nil
}

// Truth evaluates e and returns the Python truthiness of the result.
func (e *Expr) Truth(env []Value) (bool, error) {
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
	if -exact <= x && x <= exact && -exact <= y && y <= exact {
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

// exFloatPow is CPython's float_pow: special cases first, then the C pow.
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
		r = math.Pow(iv, iw)
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
	f := math.Ldexp(r.hi+r.lo, re)
	if math.Abs(f) >= 0x1p-1022 || re < -1200 {
		return f
	}
	// Subnormal: Ldexp would round a second time, so round once exactly.
	z := new(big.Float).SetPrec(200).SetFloat64(r.hi)
	z.Add(z, new(big.Float).SetFloat64(r.lo))
	f, _ = z.SetMantExp(z, re).Float64()
	return f
}

// exDD is an unevaluated sum hi+lo with |lo| <= ulp(hi)/2.
type exDD struct{ hi, lo float64 }

func (a exDD) mul(b exDD) exDD {
	p := a.hi * b.hi
	e := math.FMA(a.hi, b.hi, -p) + (a.hi*b.lo + a.lo*b.hi)
	hi := p + e
	return exDD{hi, e - (hi - p)}
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
