package genome

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// This file holds the Python 3 semantics of operators and builtins on Values:
// arithmetic, comparison, abs, int, float and round, with Python's messages.

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
