package genome

import "math"

// This file builds the general tree's evaluation closures, with inline int
// fast cases, and range() and min()/max() as Python evaluates them.

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
