package genome

import (
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a parameter value.
type Kind uint8

// The value kinds a parameter can hold.
const (
	KindInt Kind = iota + 1
	KindFloat
	KindBool
	KindString
)

func (k Kind) String() string {
	switch k {
	case KindInt:
		return "int"
	case KindFloat:
		return "float"
	case KindBool:
		return "bool"
	case KindString:
		return "string"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind parses the names used in specs and FAIR T1 files.
func ParseKind(s string) (Kind, bool) {
	switch strings.ToLower(s) {
	case "int", "integer":
		return KindInt, true
	case "float", "double", "real":
		return KindFloat, true
	case "bool", "boolean":
		return KindBool, true
	case "string", "str":
		return KindString, true
	}
	return 0, false
}

// Value is one parameter value or the result of an expression.
// Exactly one of I, F, S is meaningful, chosen by Kind; a bool keeps 0 or 1 in I,
// as Python's bool is an int.
type Value struct {
	Kind Kind
	I    int64
	F    float64
	S    string
}

// Int returns an int value.
func Int(i int64) Value { return Value{Kind: KindInt, I: i} }

// Float returns a float value.
func Float(f float64) Value { return Value{Kind: KindFloat, F: f} }

// Bool returns a bool value.
func Bool(b bool) Value {
	if b {
		return Value{Kind: KindBool, I: 1}
	}
	return Value{Kind: KindBool}
}

// Str returns a string value.
func Str(s string) Value { return Value{Kind: KindString, S: s} }

// IsNumber reports whether v takes part in arithmetic (int, float or bool).
func (v Value) IsNumber() bool { return v.Kind == KindInt || v.Kind == KindFloat || v.Kind == KindBool }

// Float64 returns v as a float64 for numeric kinds.
func (v Value) Float64() (float64, bool) {
	switch v.Kind {
	case KindInt, KindBool:
		return float64(v.I), true
	case KindFloat:
		return v.F, true
	}
	return 0, false
}

// Truth is Python's truthiness.
func (v Value) Truth() bool {
	switch v.Kind {
	case KindInt, KindBool:
		return v.I != 0
	case KindFloat:
		return v.F != 0
	case KindString:
		return v.S != ""
	}
	return false
}

// Equal is Python's ==: numbers compare by value across int, float and bool.
func (v Value) Equal(w Value) bool {
	if v.IsNumber() && w.IsNumber() {
		if v.Kind != KindFloat && w.Kind != KindFloat {
			return v.I == w.I
		}
		a, _ := v.Float64()
		b, _ := w.Float64()
		return a == b
	}
	return v.Kind == w.Kind && v.S == w.S
}

// String formats v as Python's str() does, which is how Kernel Tuner builds cache keys.
func (v Value) String() string {
	switch v.Kind {
	case KindInt:
		return strconv.FormatInt(v.I, 10)
	case KindFloat:
		return PyFloat(v.F)
	case KindBool:
		if v.I != 0 {
			return "True"
		}
		return "False"
	case KindString:
		return v.S
	}
	return "<invalid>"
}

// PyFloat formats f as Python's repr(float): the shortest round-tripping digits,
// with ".0" on integral values and exponent form outside [1e-4, 1e16).
func PyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	a := math.Abs(f)
	if a != 0 && (a < 1e-4 || a >= 1e16) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Go writes e+16 / e-05; Python writes e+16 / e-05 too, but drops a leading
		// zero only for three-digit exponents, which Go never pads. Same output.
		return s
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}
