package genome

import (
	"math"
	"slices"
)

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
