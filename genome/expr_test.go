package genome

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// exprTestEnv is the environment of TestEval; its expected values were
// produced by python3 with the same names bound.
var exprTestEnv = []struct {
	name string
	val  Value
}{
	{"a", Int(7)}, {"b", Int(-2)}, {"c", Float(2.5)}, {"d", Float(-7.5)},
	{"t", Bool(true)}, {"f", Bool(false)}, {"s", Str("abc")}, {"e", Str("")},
	{"z", Int(0)}, {"n", Int(-7)}, {"big", Int(1 << 62)}, {"m", Int(math.MinInt64)},
	{"inf", Float(math.Inf(1))}, {"nan", Float(math.NaN())},
}

func exprTestResolve(name string) (int, bool) {
	for i, v := range exprTestEnv {
		if v.name == name {
			return i, true
		}
	}
	return 0, false
}

func exprTestValues() []Value {
	env := make([]Value, len(exprTestEnv))
	for i, v := range exprTestEnv {
		env[i] = v.val
	}
	return env
}

// sameValue is exact equality: same kind, and floats equal bit for bit
// (so -0.0 differs from 0.0) or both NaN.
func sameValue(a, b Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	if a.Kind == KindFloat {
		return math.Float64bits(a.F) == math.Float64bits(b.F) || math.IsNaN(a.F) && math.IsNaN(b.F)
	}
	return a.I == b.I && a.S == b.S
}

func showValue(v Value) string {
	if v.Kind == KindString {
		return "'" + v.S + "'"
	}
	if v.Kind == KindFloat && v.F == 0 && math.Signbit(v.F) {
		return "-0.0"
	}
	return v.String() + " (" + v.Kind.String() + ")"
}

// exprEvalTests hold expressions over exprTestEnv with their results in
// Python 3. Rows with err expect an error containing err (any error when err
// is empty); the comment is Python's.
var exprEvalTests = []struct {
	name string
	want Value
	err  string
}{
	{name: "1 + 2", want: Int(3)},
	{name: "7 - 10", want: Int(-3)},
	{name: "6 * 7", want: Int(42)},
	{name: "7 / 2", want: Float(3.5)},
	{name: "-7 / 2", want: Float(-3.5)},
	{name: "6 / 3", want: Float(2.0)},
	{name: "-7 // 2", want: Int(-4)},
	{name: "-7 % 2", want: Int(1)},
	{name: "7 % -2", want: Int(-1)},
	{name: "7 // -2", want: Int(-4)},
	{name: "-7 // -2", want: Int(3)},
	{name: "-7 % -2", want: Int(-1)},
	{name: "7 % 2", want: Int(1)},
	{name: "7 // 2", want: Int(3)},
	{name: "0 % 5", want: Int(0)},
	{name: "0 // -3", want: Int(0)},
	{name: "a + b", want: Int(5)},
	{name: "a - b", want: Int(9)},
	{name: "a * b", want: Int(-14)},
	{name: "a / b", want: Float(-3.5)},
	{name: "a // b", want: Int(-4)},
	{name: "a % b", want: Int(-1)},
	{name: "b // a", want: Int(-1)},
	{name: "b % a", want: Int(5)},
	{name: "n // 2", want: Int(-4)},
	{name: "n % 2", want: Int(1)},
	{name: "n // -2", want: Int(3)},
	{name: "n % -2", want: Int(-1)},
	{name: "a % 1", want: Int(0)},
	{name: "-2**2", want: Int(-4)},
	{name: "2**-1", want: Float(0.5)},
	{name: "2**3**2", want: Int(512)},
	{name: "(-2)**2", want: Int(4)},
	{name: "(-2)**3", want: Int(-8)},
	{name: "(-2)**-1", want: Float(-0.5)},
	{name: "-2**-2", want: Float(-0.25)},
	{name: "2**0", want: Int(1)},
	{name: "0**0", want: Int(1)},
	{name: "0**5", want: Int(0)},
	{name: "2**62", want: Int(4611686018427387904)},
	{name: "2**63", err: "integer overflow"},
	{name: "(-2)**63", want: Int(-9223372036854775808)},
	{name: "(-2)**64", err: "integer overflow"},
	{name: "3**39", want: Int(4052555153018976267)},
	{name: "3**40", err: "integer overflow"},
	{name: "1**-5", want: Float(1.0)},
	{name: "(-1)**-3", want: Float(-1.0)},
	{name: "4**0.5", want: Float(2.0)},
	{name: "(-8)**(1/3)", err: "complex"},
	{name: "2.0**-1", want: Float(0.5)},
	{name: "0.0**0", want: Float(1.0)},
	{name: "0**-1", err: "cannot be raised" /* ZeroDivisionError: 0.0 cannot be raised to a negative power */},
	{name: "0.0**-1", err: "cannot be raised" /* ZeroDivisionError: 0.0 cannot be raised to a negative power */},
	{name: "0.0**-1.5", err: "cannot be raised" /* ZeroDivisionError: 0.0 cannot be raised to a negative power */},
	{name: "10**-3", want: Float(0.001)},
	{name: "1.1**10", want: Float(2.5937424601000023)},
	{name: "2.0**1024", err: "overflow" /* OverflowError: (34, 'Numerical result out of range') */},
	{name: "2.0**-1075", want: Float(0.0)},
	{name: "(-2.0)**3", want: Float(-8.0)},
	{name: "(-2.0)**2.0", want: Float(4.0)},
	{name: "(-1)**0.5", err: "complex"},
	{name: "2**0.5", want: Float(1.4142135623730951)},
	{name: "a ** b", want: Float(0.02040816326530612)},
	{name: "b ** a", want: Int(-128)},
	{name: "b ** 3", want: Int(-8)},
	{name: "2 ** 10", want: Int(1024)},
	{name: "(-1) ** 9223372036854775807", want: Int(-1)},
	{name: "1 ** 9223372036854775807", want: Int(1)},
	{name: "0 ** 9223372036854775807", want: Int(0)},
	{name: "inf ** 0", want: Float(1.0)},
	{name: "nan ** 0", want: Float(1.0)},
	{name: "1 ** nan", want: Float(1.0)},
	{name: "nan ** 1", want: Float(math.NaN())},
	{name: "2 ** inf", want: Float(math.Inf(1))},
	{name: "0.5 ** inf", want: Float(0.0)},
	{name: "2 ** -inf", want: Float(0.0)},
	{name: "(-inf) ** 3", want: Float(math.Inf(-1))},
	{name: "(-inf) ** 2", want: Float(math.Inf(1))},
	{name: "(-inf) ** -3", want: Float(math.Copysign(0, -1))},
	{name: "(-inf) ** 0.5", want: Float(math.Inf(1))},
	{name: "inf ** -1", want: Float(0.0)},
	{name: "(-1) ** inf", want: Float(1.0)},
	{name: "(-0.5) ** inf", want: Float(0.0)},
	{name: "-7.5 // 2", want: Float(-4.0)},
	{name: "-7.5 % 2", want: Float(0.5)},
	{name: "7.5 % -2", want: Float(-0.5)},
	{name: "7.5 // -2", want: Float(-4.0)},
	{name: "-7.5 // -2", want: Float(3.0)},
	{name: "7.5 % 2", want: Float(1.5)},
	{name: "7.5 // 2", want: Float(3.0)},
	{name: "1 % 0.5", want: Float(0.0)},
	{name: "-0.0 % 1", want: Float(0.0)},
	{name: "0.0 % -1", want: Float(math.Copysign(0, -1))},
	{name: "0.0 // -1", want: Float(math.Copysign(0, -1))},
	{name: "-0.0 // 1", want: Float(math.Copysign(0, -1))},
	{name: "5 // 0.3", want: Float(16.0)},
	{name: "5 % 0.3", want: Float(0.20000000000000018)},
	{name: "-5 // 0.3", want: Float(-17.0)},
	{name: "-5 % 0.3", want: Float(0.09999999999999981)},
	{name: "1e308 % 1e-308", want: Float(3.498445546245627e-309)},
	{name: "5.0 // inf", want: Float(0.0)},
	{name: "-5.0 // inf", want: Float(-1.0)},
	{name: "5.0 % inf", want: Float(5.0)},
	{name: "-5.0 % inf", want: Float(math.Inf(1))},
	{name: "inf % 2", want: Float(math.NaN())},
	{name: "inf // 2", want: Float(math.NaN())},
	{name: "c * 2", want: Float(5.0)},
	{name: "c + a", want: Float(9.5)},
	{name: "a / 2", want: Float(3.5)},
	{name: "d // 2", want: Float(-4.0)},
	{name: "d % 2", want: Float(0.5)},
	{name: "a % c", want: Float(2.0)},
	{name: "a // c", want: Float(2.0)},
	{name: "c ** 2", want: Float(6.25)},
	{name: "c ** -1", want: Float(0.4)},
	{name: "1.5 + 2", want: Float(3.5)},
	{name: "1e3", want: Float(1000.0)},
	{name: ".5", want: Float(0.5)},
	{name: "1.", want: Float(1.0)},
	{name: "1e-3", want: Float(0.001)},
	{name: "1E+2", want: Float(100.0)},
	{name: "1_000", want: Int(1000)},
	{name: "1_0.5", want: Float(10.5)},
	{name: "0x1F", want: Int(31)},
	{name: "0XfF", want: Int(255)},
	{name: "0o17", want: Int(15)},
	{name: "0b101", want: Int(5)},
	{name: "0_0", want: Int(0)},
	{name: "00", want: Int(0)},
	{name: "3.0 * 4", want: Float(12.0)},
	{name: "0.1 + 0.2", want: Float(0.30000000000000004)},
	{name: "1e308 * 10", want: Float(math.Inf(1))},
	{name: "-1e308 * 10", want: Float(math.Inf(-1))},
	{name: "1e308*10 - 1e308*10", want: Float(math.NaN())},
	{name: "1e309", want: Float(math.Inf(1))},
	{name: "1e-400", want: Float(0.0)},
	{name: "1/3", want: Float(0.3333333333333333)},
	{name: "2/3", want: Float(0.6666666666666666)},
	{name: "10/4", want: Float(2.5)},
	{name: "-1/3", want: Float(-0.3333333333333333)},
	{name: "9007199254740993 / 1", want: Float(9007199254740992.0)},
	{name: "9007199254740993 / 3", want: Float(3002399751580331.0)},
	{name: "9223372036854775807 / 10", want: Float(9.223372036854776e+17)},
	{name: "-9223372036854775807 / 7", want: Float(-1.3176245766935393e+18)},
	{name: "2**53 + 1 == 2.0**53", want: Bool(false)},
	{name: "2**53 + 1 > 2.0**53", want: Bool(true)},
	{name: "9223372036854775807 == 2.0**63", want: Bool(false)},
	{name: "9223372036854775807 < 2.0**63", want: Bool(true)},
	{name: "9223372036854775807 < 9.223372036854775807e18", want: Bool(true)},
	{name: "m == -9.223372036854775808e18", want: Bool(true)},
	{name: "m < -9.223372036854775808e18", want: Bool(false)},
	{name: "m > -1e19", want: Bool(true)},
	{name: "big + 0.5 > big", want: Bool(false)},
	{name: "big < big + 0.5", want: Bool(false)},
	{name: "3 == 3.0000000000000004", want: Bool(false)},
	{name: "1e308 / 1e-308", want: Float(math.Inf(1))},
	{name: "1.0 / 0.0", err: "division by zero" /* ZeroDivisionError: float division by zero */},
	{name: "1.0 // 0", err: "division by zero" /* ZeroDivisionError: float floor division by zero */},
	{name: "1.0 % 0.0", err: "division by zero" /* ZeroDivisionError: float modulo */},
	{name: "True + True", want: Int(2)},
	{name: "True * 3", want: Int(3)},
	{name: "t + t", want: Int(2)},
	{name: "t - f", want: Int(1)},
	{name: "t * 2.5", want: Float(2.5)},
	{name: "-t", want: Int(-1)},
	{name: "+t", want: Int(1)},
	{name: "~t", want: Int(-2)},
	{name: "~a", want: Int(-8)},
	{name: "~n", want: Int(6)},
	{name: "t / 2", want: Float(0.5)},
	{name: "t // 1", want: Int(1)},
	{name: "t % 2", want: Int(1)},
	{name: "t ** 2", want: Int(1)},
	{name: "True ** 2", want: Int(1)},
	{name: "f ** f", want: Int(1)},
	{name: "t & t", want: Bool(true)},
	{name: "t | f", want: Bool(true)},
	{name: "t ^ t", want: Bool(false)},
	{name: "t & 1", want: Int(1)},
	{name: "f | 0", want: Int(0)},
	{name: "a & 3", want: Int(3)},
	{name: "a | 8", want: Int(15)},
	{name: "a ^ 5", want: Int(2)},
	{name: "n & 255", want: Int(249)},
	{name: "n | 1", want: Int(-7)},
	{name: "a << 2", want: Int(28)},
	{name: "a >> 1", want: Int(3)},
	{name: "n >> 1", want: Int(-4)},
	{name: "1 << 62", want: Int(4611686018427387904)},
	{name: "1 << 63", err: "integer overflow"},
	{name: "-1 << 63", want: Int(-9223372036854775808)},
	{name: "1 << 64", err: "integer overflow"},
	{name: "0 << 100", want: Int(0)},
	{name: "a >> 100", want: Int(0)},
	{name: "n >> 100", want: Int(-1)},
	{name: "1 << -1", err: "" /* ValueError: negative shift count */},
	{name: "a >> -1", err: "" /* ValueError: negative shift count */},
	{name: "1.0 << 1", err: "unsupported operand" /* TypeError: unsupported operand type(s) for <<: 'float' and 'int' */},
	{name: "a & 1.0", err: "unsupported operand" /* TypeError: unsupported operand type(s) for &: 'int' and 'float' */},
	{name: "t << 3", want: Int(8)},
	{name: "9223372036854775807 + 1", err: "integer overflow"},
	{name: "-9223372036854775807 - 1", want: Int(-9223372036854775808)},
	{name: "-9223372036854775807 - 2", err: "integer overflow"},
	{name: "big * 2", err: "integer overflow"},
	{name: "big * -2", want: Int(-9223372036854775808)},
	{name: "big * 1", want: Int(4611686018427387904)},
	{name: "m // -1", err: "integer overflow"},
	{name: "m % -1", want: Int(0)},
	{name: "-m", err: "integer overflow"},
	{name: "abs(m)", err: "integer overflow"},
	{name: "m * -1", err: "integer overflow"},
	{name: "m - 1", err: "integer overflow"},
	{name: "m + -1", err: "integer overflow"},
	{name: "big + big", err: "integer overflow"},
	{name: "big + big - 1 + big", err: "integer overflow"},
	{name: "m // 1", want: Int(-9223372036854775808)},
	{name: "m / -1", want: Float(9.223372036854776e+18)},
	{name: "m * 1", want: Int(-9223372036854775808)},
	{name: "3037000500 * 3037000500", err: "integer overflow"},
	{name: "3037000499 * 3037000499", want: Int(9223372030926249001)},
	{name: "-3037000500 * 3037000500", err: "integer overflow"},
	{name: "1 < 2", want: Bool(true)},
	{name: "2 < 1", want: Bool(false)},
	{name: "1 < 2 < 3", want: Bool(true)},
	{name: "1 < 3 < 2", want: Bool(false)},
	{name: "3 > 2 > 1", want: Bool(true)},
	{name: "1 == 1.0", want: Bool(true)},
	{name: "1 != 1.0", want: Bool(false)},
	{name: "True == 1", want: Bool(true)},
	{name: "False == 0", want: Bool(true)},
	{name: "True == 1.0", want: Bool(true)},
	{name: "1 <= 1 <= 1", want: Bool(true)},
	{name: "1 < 2 == 2", want: Bool(true)},
	{name: "1 < 2 > 1.5", want: Bool(true)},
	{name: "a < b < 1/0", want: Bool(false)},
	{name: "a > b < 1/0", err: "division by zero" /* ZeroDivisionError: division by zero */},
	{name: "b < a < 1/0", err: "division by zero" /* ZeroDivisionError: division by zero */},
	{name: "1 < 2 < 3 < 4 < 5", want: Bool(true)},
	{name: "1 < 2 < 3 < 2 < 5", want: Bool(false)},
	{name: "a >= 7 >= c > b", want: Bool(true)},
	{name: "s == 'abc'", want: Bool(true)},
	{name: "s < 'abd'", want: Bool(true)},
	{name: "s > 'ab'", want: Bool(true)},
	{name: "'a' < 'B'", want: Bool(false)},
	{name: "'\u00e9' > 'z'", want: Bool(true)},
	{name: "s == 1", want: Bool(false)},
	{name: "s != 1", want: Bool(true)},
	{name: "1 == s", want: Bool(false)},
	{name: "s == t", want: Bool(false)},
	{name: "s < 1", err: "not supported between" /* TypeError: '<' not supported between instances of 'str' and 'int' */},
	{name: "1 < s", err: "not supported between" /* TypeError: '<' not supported between instances of 'int' and 'str' */},
	{name: "s >= c", err: "not supported between" /* TypeError: '>=' not supported between instances of 'str' and 'float' */},
	{name: "s <= s", want: Bool(true)},
	{name: "e == ''", want: Bool(true)},
	{name: "c > 2", want: Bool(true)},
	{name: "c == 2.5", want: Bool(true)},
	{name: "c < 3 < a", want: Bool(true)},
	{name: "inf > big", want: Bool(true)},
	{name: "inf == inf", want: Bool(true)},
	{name: "nan == nan", want: Bool(false)},
	{name: "nan != nan", want: Bool(true)},
	{name: "nan < 1", want: Bool(false)},
	{name: "1 < nan", want: Bool(false)},
	{name: "nan > 1", want: Bool(false)},
	{name: "nan >= nan", want: Bool(false)},
	{name: "a == nan", want: Bool(false)},
	{name: "a != nan", want: Bool(true)},
	{name: "a < inf", want: Bool(true)},
	{name: "m > -inf", want: Bool(true)},
	{name: "s + s", want: Str("abcabc")},
	{name: "s * 2", want: Str("abcabc")},
	{name: "2 * s", want: Str("abcabc")},
	{name: "s * -1", want: Str("")},
	{name: "s * t", want: Str("abc")},
	{name: "s * 0", want: Str("")},
	{name: "s + 1", err: "" /* TypeError: can only concatenate str (not "int") to str */},
	{name: "1 + s", err: "unsupported operand" /* TypeError: unsupported operand type(s) for +: 'int' and 'str' */},
	{name: "s - s", err: "unsupported operand" /* TypeError: unsupported operand type(s) for -: 'str' and 'str' */},
	{name: "s * 1.5", err: "" /* TypeError: can't multiply sequence by non-int of type 'float' */},
	{name: "-s", err: "" /* TypeError: bad operand type for unary -: 'str' */},
	{name: "~s", err: "" /* TypeError: bad operand type for unary ~: 'str' */},
	{name: "+s", err: "" /* TypeError: bad operand type for unary +: 'str' */},
	{name: "s % 1", err: "" /* TypeError: not all arguments converted during string formatting */},
	{name: "s / 2", err: "unsupported operand" /* TypeError: unsupported operand type(s) for /: 'str' and 'int' */},
	{name: "'a' 'b'", want: Str("ab")},
	{name: "\"dq\"", want: Str("dq")},
	{name: "'it\\'s'", want: Str("it's")},
	{name: "\"a\\\"b\"", want: Str("a\"b")},
	{name: "'\\x41\\u00e9\\t'", want: Str("A\u00e9\t")},
	{name: "r'\\n'", want: Str("\\n")},
	{name: "'''tri'ple'''", want: Str("tri'ple")},
	{name: "\"\"\"x\"y\"\"\"", want: Str("x\"y")},
	{name: "'\\101'", want: Str("A")},
	{name: "'\\q'", want: Str("\\q")},
	{name: "u'x'", want: Str("x")},
	{name: "0 and 1/0", want: Int(0)},
	{name: "1 or 1/0", want: Int(1)},
	{name: "0 or 5", want: Int(5)},
	{name: "3 and 4", want: Int(4)},
	{name: "0 and 5", want: Int(0)},
	{name: "'' or 'x'", want: Str("x")},
	{name: "s and 0", want: Int(0)},
	{name: "s and z", want: Int(0)},
	{name: "not 0", want: Bool(true)},
	{name: "not 5", want: Bool(false)},
	{name: "not s", want: Bool(false)},
	{name: "not e", want: Bool(true)},
	{name: "not c", want: Bool(false)},
	{name: "not a < b", want: Bool(true)},
	{name: "not not a", want: Bool(true)},
	{name: "a and b or c", want: Int(-2)},
	{name: "0 or 0.0", want: Float(0.0)},
	{name: "f or t", want: Bool(true)},
	{name: "z or c", want: Float(2.5)},
	{name: "1/0 and 1", err: "division by zero" /* ZeroDivisionError: division by zero */},
	{name: "0 or 1/0", err: "division by zero" /* ZeroDivisionError: division by zero */},
	{name: "1 and 1/0", err: "division by zero" /* ZeroDivisionError: division by zero */},
	{name: "a if a > b else b", want: Int(7)},
	{name: "a if b > a else b", want: Int(-2)},
	{name: "1 if 0 else 1/0", err: "division by zero" /* ZeroDivisionError: division by zero */},
	{name: "1/0 if 0 else 2", want: Int(2)},
	{name: "1 if 1/0 else 2", err: "division by zero" /* ZeroDivisionError: division by zero */},
	{name: "a < b or c < a", want: Bool(true)},
	{name: "a < b and b", want: Bool(false)},
	{name: "(a or b) + 1", want: Int(8)},
	{name: "not a == b", want: Bool(true)},
	{name: "not a != b", want: Bool(false)},
	{name: "min(a, b)", want: Int(-2)},
	{name: "max(a, b)", want: Int(7)},
	{name: "min(a, b, c)", want: Int(-2)},
	{name: "max(c, a)", want: Int(7)},
	{name: "max(a, c, d)", want: Int(7)},
	{name: "max(1, 1.0)", want: Int(1)},
	{name: "max(1.0, 1)", want: Float(1.0)},
	{name: "min(1, True)", want: Int(1)},
	{name: "min(True, 1)", want: Bool(true)},
	{name: "min(1, 1.0, True)", want: Int(1)},
	{name: "max([1, 5, 3])", want: Int(5)},
	{name: "min((4, 2))", want: Int(2)},
	{name: "max([a])", want: Int(7)},
	{name: "min([a, b, c])", want: Int(-2)},
	{name: "max(s, 'b')", want: Str("b")},
	{name: "min(s, 'a')", want: Str("a")},
	{name: "max(s, 1)", err: "not supported between" /* TypeError: '>' not supported between instances of 'int' and 'str' */},
	{name: "min(1, s)", err: "not supported between" /* TypeError: '<' not supported between instances of 'str' and 'int' */},
	{name: "max(a, 1/0)", err: "division by zero" /* ZeroDivisionError: division by zero */},
	{name: "max(s, 1, 1/0)", err: "division by zero" /* ZeroDivisionError: division by zero */},
	{name: "max(nan, 1)", want: Float(math.NaN())},
	{name: "max(1, nan)", want: Int(1)},
	{name: "min(nan, 1)", want: Float(math.NaN())},
	{name: "max([])", err: "" /* ValueError: max() arg is an empty sequence */},
	{name: "abs(b)", want: Int(2)},
	{name: "abs(d)", want: Float(7.5)},
	{name: "abs(t)", want: Int(1)},
	{name: "abs(f)", want: Int(0)},
	{name: "abs(-0.0)", want: Float(0.0)},
	{name: "abs(s)", err: "" /* TypeError: bad operand type for abs(): 'str' */},
	{name: "abs(a)", want: Int(7)},
	{name: "abs(-inf)", want: Float(math.Inf(1))},
	{name: "int(c)", want: Int(2)},
	{name: "int(d)", want: Int(-7)},
	{name: "int(t)", want: Int(1)},
	{name: "int(a)", want: Int(7)},
	{name: "int(-0.5)", want: Int(0)},
	{name: "int('12')", want: Int(12)},
	{name: "int(' -3 ')", want: Int(-3)},
	{name: "int('+3')", want: Int(3)},
	{name: "int('1_000')", want: Int(1000)},
	{name: "int('1.5')", err: "" /* ValueError: invalid literal for int() with base 10: '1.5' */},
	{name: "int('')", err: "" /* ValueError: invalid literal for int() with base 10: '' */},
	{name: "int('0x10')", err: "" /* ValueError: invalid literal for int() with base 10: '0x10' */},
	{name: "int('1__0')", err: "" /* ValueError: invalid literal for int() with base 10: '1__0' */},
	{name: "int('007')", want: Int(7)},
	{name: "int(1e20)", err: "integer overflow"},
	{name: "int(1e18)", want: Int(1000000000000000000)},
	{name: "int(inf)", err: "infinity" /* OverflowError: cannot convert float infinity to integer */},
	{name: "int(nan)", err: "NaN" /* ValueError: cannot convert float NaN to integer */},
	{name: "int(9.2233720368547748e18)", want: Int(9223372036854774784)},
	{name: "float(a)", want: Float(7.0)},
	{name: "float(t)", want: Float(1.0)},
	{name: "float(c)", want: Float(2.5)},
	{name: "float('1.5')", want: Float(1.5)},
	{name: "float(' -inf ')", want: Float(math.Inf(-1))},
	{name: "float('Infinity')", want: Float(math.Inf(1))},
	{name: "float('nan') == float('nan')", want: Bool(false)},
	{name: "float('1e3')", want: Float(1000.0)},
	{name: "float('1_0.5')", want: Float(10.5)},
	{name: "float('abc')", err: "" /* ValueError: could not convert string to float: 'abc' */},
	{name: "float('0x10')", err: "" /* ValueError: could not convert string to float: '0x10' */},
	{name: "float('1__0')", err: "" /* ValueError: could not convert string to float: '1__0' */},
	{name: "float('')", err: "" /* ValueError: could not convert string to float: '' */},
	{name: "float('.5')", want: Float(0.5)},
	{name: "float('5.')", want: Float(5.0)},
	{name: "round(2.5)", want: Int(2)},
	{name: "round(3.5)", want: Int(4)},
	{name: "round(-2.5)", want: Int(-2)},
	{name: "round(-0.5)", want: Int(0)},
	{name: "round(0.5)", want: Int(0)},
	{name: "round(c)", want: Int(2)},
	{name: "round(d)", want: Int(-8)},
	{name: "round(a)", want: Int(7)},
	{name: "round(t)", want: Int(1)},
	{name: "round(2.675)", want: Int(3)},
	{name: "round(inf)", err: "infinity" /* OverflowError: cannot convert float infinity to integer */},
	{name: "round(nan)", err: "NaN" /* ValueError: cannot convert float NaN to integer */},
	{name: "round(1e300)", err: "integer overflow"},
	{name: "round(s)", err: "" /* TypeError: type str doesn't define __round__ method */},
	{name: "bool(a)", want: Bool(true)},
	{name: "bool(z)", want: Bool(false)},
	{name: "bool(e)", want: Bool(false)},
	{name: "bool(s)", want: Bool(true)},
	{name: "bool(0.0)", want: Bool(false)},
	{name: "bool()", want: Bool(false)},
	{name: "str(a)", want: Str("7")},
	{name: "str(c)", want: Str("2.5")},
	{name: "str(t)", want: Str("True")},
	{name: "str(1e16)", want: Str("1e+16")},
	{name: "str(1e-5)", want: Str("1e-05")},
	{name: "str(0.1)", want: Str("0.1")},
	{name: "str(1/3)", want: Str("0.3333333333333333")},
	{name: "str(2.0**60)", want: Str("1.152921504606847e+18")},
	{name: "str(-0.0)", want: Str("-0.0")},
	{name: "str(s)", want: Str("abc")},
	{name: "float()", want: Float(0.0)},
	{name: "int()", want: Int(0)},
	{name: "str()", want: Str("")},
	{name: "str(1e22)", want: Str("1e+22")},
	{name: "str(1.5e-7)", want: Str("1.5e-07")},
	{name: "a in [1, 7]", want: Bool(true)},
	{name: "a in [1, 2]", want: Bool(false)},
	{name: "a not in [1, 2]", want: Bool(true)},
	{name: "a in []", want: Bool(false)},
	{name: "c in (2.5,)", want: Bool(true)},
	{name: "c in (1, 2)", want: Bool(false)},
	{name: "s in ['abc', 1]", want: Bool(true)},
	{name: "s in [1, 2]", want: Bool(false)},
	{name: "1 in [True]", want: Bool(true)},
	{name: "1.0 in [1]", want: Bool(true)},
	{name: "a in [1, 1/0]", err: "division by zero" /* ZeroDivisionError: division by zero */},
	{name: "a in [7, 1/0]", err: "division by zero" /* ZeroDivisionError: division by zero */},
	{name: "1/0 in [1]", err: "division by zero" /* ZeroDivisionError: division by zero */},
	{name: "a in range(10)", want: Bool(true)},
	{name: "a in range(7)", want: Bool(false)},
	{name: "a in range(0, 10, 2)", want: Bool(false)},
	{name: "a in range(1, 10, 2)", want: Bool(true)},
	{name: "a in range(10, 0, -3)", want: Bool(true)},
	{name: "a in range(13, 0, -3)", want: Bool(true)},
	{name: "b in range(-10, 0)", want: Bool(true)},
	{name: "7.0 in range(10)", want: Bool(true)},
	{name: "7.5 in range(10)", want: Bool(false)},
	{name: "t in range(2)", want: Bool(true)},
	{name: "s in range(10)", want: Bool(false)},
	{name: "a in range(0, 10, 0)", err: "" /* ValueError: range() arg 3 must not be zero */},
	{name: "a in range(1.5)", err: "" /* TypeError: 'float' object cannot be interpreted as an integer */},
	{name: "a not in range(5)", want: Bool(true)},
	{name: "'b' in s", want: Bool(true)},
	{name: "'x' in s", want: Bool(false)},
	{name: "'' in s", want: Bool(true)},
	{name: "'bc' not in s", want: Bool(false)},
	{name: "1 in s", err: "" /* TypeError: 'in <string>' requires string as left operand, not int */},
	{name: "s in 1", err: "" /* TypeError: argument of type 'int' is not iterable */},
	{name: "s in c", err: "" /* TypeError: argument of type 'float' is not iterable */},
	{name: "a in list(range(10))", want: Bool(true)},
	{name: "a in tuple([7])", want: Bool(true)},
	{name: "32 ** 1.5", want: Float(181.01933598375618)},
	{name: "2.0 ** 2.5", want: Float(5.656854249492381)},
	{name: "1e3 ** 2.5", want: Float(31622776.60168379)},
	{name: "a ** 1.5", want: Float(18.520259177452136)},
	{name: "c ** 0.5", want: Float(1.5811388300841898)},
	{name: "c ** -0.5", want: Float(0.6324555320336759)},
	{name: "2 ** 0.25", want: Float(1.189207115002721)},
	{name: "10 ** 0.1", want: Float(1.2589254117941673)},
	{name: "a ** -1.3333333333333333", want: Float(0.07467970836781576)},
	{name: "1e-3 ** 7.892052706151389", want: Float(2.1078605778133736e-24)},
	{name: "0.5 ** 1074.5", want: Float(5e-324)},
	{name: "1.5 ** 1750.5", want: Float(1.769086127627106e+308)},
	{name: "0 / m", want: Float(math.Copysign(0, -1))},
	{name: "z / b", want: Float(math.Copysign(0, -1))},
	{name: "-0.0 / 1", want: Float(math.Copysign(0, -1))},
}

func TestEval(t *testing.T) {
	tests := exprEvalTests
	env := exprTestValues()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Compile(tt.name, exprTestResolve)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.name, err)
			}
			got, err := e.Eval(env)
			wantErr := tt.err != "" || tt.want.Kind == 0
			if wantErr {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("Eval(%q) = %v, %v, want error containing %q", tt.name, showValue(got), err, tt.err)
				}
				return
			}
			if err != nil || !sameValue(got, tt.want) {
				t.Errorf("Eval(%q) = %v, %v, want %v", tt.name, showValue(got), err, showValue(tt.want))
			}
		})
	}
}

// TestFastMatchesGeneral runs every TestEval expression with int-only
// environments, where the fast tree applies, and checks it agrees exactly
// with the general tree.
func TestFastMatchesGeneral(t *testing.T) {
	var exprs []string
	for _, tt := range exprEvalTests {
		exprs = append(exprs, tt.name)
	}
	envs := [][]int64{
		{7, -2, 3, -8, 1, 0, 5, 0, 0, -7, 1 << 62, math.MinInt64, 1 << 53, -1},
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{-3, 64, -1, 2, 1, 1, -5, 3, 0, 9, math.MaxInt64, 1, -1, 63},
	}
	fast := 0
	for _, src := range exprs {
		e, err := Compile(src, exprTestResolve)
		if err != nil {
			t.Fatalf("Compile(%q): %v", src, err)
		}
		if e.hasFast {
			fast++
		}
		for _, ints := range envs {
			env := make([]Value, len(ints))
			for i, x := range ints {
				env[i] = Int(x)
			}
			got, err := e.Eval(env)
			want, werr := e.eval(env)
			if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() || !sameValue(got, want) {
				t.Errorf("Eval(%q) = %v, %v, want %v, %v (env %v)", src, showValue(got), err, showValue(want), werr, ints)
			}
			truth, terr := e.Truth(env)
			if (terr == nil) != (werr == nil) || terr == nil && truth != want.Truth() {
				t.Errorf("Truth(%q) = %v, %v, want %v, %v (env %v)", src, truth, terr, want.Truth(), werr, ints)
			}
		}
	}
	t.Logf("%d of %d expressions have a fast form", fast, len(exprs))
}

// The constraint examples of the brief, shared with the benchmarks.
var exprConditions = []struct {
	name, src string
}{
	{"shmem", "use_shmem == 0 or (((block_size_x*tile_size_x+(filter_width-1)))*((block_size_y*tile_size_y+(filter_height-1)))) < 12*1024"},
	{"padding", "use_padding==0 or block_size_x % 32 != 0"},
	{"threads", "32 <= block_size_x * block_size_y <= 1024"},
	{"kwg", "KWG % ((MDIMC*NDIMC)/MDIMA) == 0"},
	{"mwg", "MWG % (MDIMC*VWM) == 0"},
}

var exprCondNames = []string{
	"use_padding", "block_size_x", "block_size_y", "use_shmem", "tile_size_x", "tile_size_y",
	"filter_width", "filter_height", "KWG", "MDIMC", "NDIMC", "MDIMA", "MWG", "VWM",
}

// exprCondEnvs hold values for exprCondNames, in that order.
var exprCondEnvs = [][]int64{
	{1, 64, 8, 1, 2, 4, 17, 17, 32, 16, 8, 32, 64, 4},
	{0, 48, 16, 0, 8, 8, 15, 15, 16, 8, 16, 16, 32, 8},
	{1, 48, 32, 1, 1, 1, 3, 3, 24, 32, 32, 64, 96, 2},
	{1, 128, 1, 1, 8, 8, 9, 9, 20, 8, 8, 3, 128, 1},
}

func exprCondResolve(name string) (int, bool) {
	i := slices.Index(exprCondNames, name)
	return i, i >= 0
}

func exprCondEnv(i int) []Value {
	env := make([]Value, len(exprCondNames))
	for j, v := range exprCondEnvs[i] {
		env[j] = Int(v)
	}
	return env
}

func TestEvalConditions(t *testing.T) {
	// Results from python3 for each row of exprCondEnvs.
	want := map[string][]bool{
		"shmem":   {true, true, true, false},
		"padding": {false, true, true, false},
		"threads": {true, true, false, true},
		"kwg":     {true, true, false, false},
		"mwg":     {true, false, false, true},
	}
	for _, c := range exprConditions {
		e, err := Compile(c.src, exprCondResolve)
		if err != nil {
			t.Fatalf("Compile(%q): %v", c.src, err)
		}
		for i := range exprCondEnvs {
			got, err := e.Truth(exprCondEnv(i))
			if err != nil || got != want[c.name][i] {
				t.Errorf("Eval(%q) = %v, %v, want %v (env %d)", c.src, got, err, want[c.name][i], i)
			}
		}
	}
}

func TestEvalNoAllocs(t *testing.T) {
	for _, c := range exprConditions {
		e, err := Compile(c.src, exprCondResolve)
		if err != nil {
			t.Fatal(err)
		}
		if !e.hasFast {
			t.Errorf("Compile(%q) has no fast form", c.src)
		}
		env := exprCondEnv(0)
		if n := testing.AllocsPerRun(100, func() { _, _ = e.Truth(env) }); n != 0 {
			t.Errorf("Truth(%q) allocates %v times per run", c.src, n)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name string
		col  int
		msg  string
	}{
		{"a +", 4, "unexpected end of expression"},
		{"(a", 1, `"(" was never closed`},
		{"[1, 2", 1, `"[" was never closed`},
		{"min(a, b", 4, `"(" was never closed`},
		{"a ** ** b", 6, `unexpected "**"`},
		{"1 +* 2", 4, `unexpected "*"`},
		{"a +* b", 4, `unexpected "*"`},
		{"foo + 1", 1, `unknown name "foo"`},
		{"a + b * nope", 9, `unknown name "nope"`},
		{"a = 1", 3, `unexpected "="`},
		{"", 1, "empty expression"},
		{"   ", 1, "empty expression"},
		{"'abc", 1, "unterminated string literal"},
		{"a == 'abc", 6, "unterminated string literal"},
		{"'''abc''", 1, "unterminated string literal"},
		{"a && b", 3, `use "and"`},
		{"a || b", 3, `use "or"`},
		{"!a", 1, `use "not"`},
		{"a is b", 3, `"is" is not supported`},
		{"None", 1, "None is not supported"},
		{"a b", 3, `unexpected "b"`},
		{"a not b", 7, `unexpected "b"`},
		{"a < < b", 5, `unexpected "<"`},
		{"a if b", 7, "unexpected end of expression"},
		{"a.b", 2, `unexpected "."`},
		{"a[0]", 2, `unexpected "["`},
		{"a(1)", 1, `unknown function "a"`},
		{"foo(1)", 1, `unknown function "foo"`},
		{"min()", 1, "at least 1 argument"},
		{"min(a)", 5, "needs a list or tuple"},
		{"abs(a, b)", 1, "abs() takes exactly 1 argument, got 2"},
		{"round(a, 2)", 1, "round() takes exactly 1 argument"},
		{"lambda", 1, `unexpected "lambda"`},
		{"01", 1, "leading zeros"},
		{"1_", 1, "invalid decimal literal"},
		{"1__0", 1, "invalid decimal literal"},
		{"1abc", 1, "invalid decimal literal"},
		{"1e", 1, "invalid decimal literal"},
		{"0x", 1, "invalid hexadecimal literal"},
		{"0b2", 1, "invalid binary literal"},
		{"2j", 1, "complex numbers are not supported"},
		{"9223372036854775808", 1, "integer literal too large"},
		{"b'x'", 1, "bytes literals are not supported"},
		{"f'{a}'", 1, "f-strings are not supported"},
		{`'\x4'`, 1, `truncated \x escape`},
		{"a @ b", 3, `unexpected "@"`},
		{"é + a", 1, `unknown name "é"`},
		{"'é' + nope", 7, `unknown name "nope"`},
		{"[a, b]", 1, "a list is only supported"},
		{"a == [1]", 6, "a list is only supported"},
		{"a in [1] in [2]", 3, "chained comparison"},
		{"a in [i for i in range(3)]", 6, "list comprehensions are only supported in value lists"},
		{"range(3)", 1, "a list is only supported"},
		{strings.Repeat("(", 300) + "a" + strings.Repeat(")", 300), 201, "nested too deeply"},
		{strings.Repeat("-", 300) + "a", 201, "nested too deeply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Compile(tt.name, exprTestResolve)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%q) = %v, %v, want *SyntaxError", tt.name, e, err)
			}
			if se.Col != tt.col || !strings.Contains(se.Msg, tt.msg) || se.Expr != tt.name {
				t.Errorf("Compile(%q) error = column %d %q, want column %d %q", tt.name, se.Col, se.Msg, tt.col, tt.msg)
			}
		})
	}
}

func TestSyntaxErrorString(t *testing.T) {
	_, err := Compile("a +* b", exprTestResolve)
	want := `expression "a +* b": column 4: unexpected "*"`
	if err == nil || err.Error() != want {
		t.Errorf("Compile error = %v, want %s", err, want)
	}
}

func TestCompileNilResolve(t *testing.T) {
	e, err := Compile("12 * 1024 + 1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.Eval(nil); err != nil || !sameValue(got, Int(12289)) {
		t.Errorf("Eval(%q) = %v, %v, want 12289", e, got, err)
	}
	var se *SyntaxError
	if _, err := Compile("x + 1", nil); !errors.As(err, &se) || se.Col != 1 {
		t.Errorf("Compile with nil resolve = %v, want unknown name at column 1", err)
	}
}

func TestNamesSlots(t *testing.T) {
	e, err := Compile("c < b and a + b > c or a == 1", func(name string) (int, bool) {
		return map[string]int{"a": 4, "b": 2, "c": 9}[name], true
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.Names(), []string{"c", "b", "a"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if got, want := e.Slots(), []int{2, 4, 9}; !slices.Equal(got, want) {
		t.Errorf("Slots() = %v, want %v", got, want)
	}
	if got := e.String(); got != "c < b and a + b > c or a == 1" {
		t.Errorf("String() = %q", got)
	}
	e.Slots()[0] = 100 // callers get a copy
	if e.Slots()[0] != 2 {
		t.Errorf("Slots() shares its slice")
	}
	if c, err := Compile("1 + 2", nil); err != nil || len(c.Slots()) != 0 || len(c.Names()) != 0 {
		t.Errorf("constant expression: %v, %v, %v", c.Slots(), c.Names(), err)
	}
}

func TestEvalBadEnv(t *testing.T) {
	e, err := Compile("a + b", exprTestResolve)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Eval([]Value{Int(1)}); err == nil {
		t.Errorf("Eval with a short env: want error")
	}
	if _, err := e.Eval([]Value{{}, Int(1)}); err == nil || !strings.Contains(err.Error(), "unsupported operand") {
		t.Errorf("Eval with an invalid value = %v, want unsupported operand", err)
	}
}

func TestRuntimeErrors(t *testing.T) {
	tests := []struct {
		name string
		msg  string
	}{
		{"1/0", `expression "1/0": division by zero`},
		{"1%0", `expression "1%0": division by zero`},
		{"a // z", "division by zero"},
		{"c % 0.0", "division by zero"},
		{`"x" < 1`, "'<' not supported between instances of 'str' and 'int'"},
		{"s + a", "unsupported operand type(s) for +: 'str' and 'int'"},
		{"big * 4", "integer overflow"},
		{"(-8.0) ** 0.5", "complex"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Compile(tt.name, exprTestResolve)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.name, err)
			}
			got, err := e.Eval(exprTestValues())
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Eval(%q) = %v, %v, want error %q", tt.name, got, err, tt.msg)
			}
			if _, terr := e.Truth(exprTestValues()); terr == nil {
				t.Errorf("Truth(%q): want error", tt.name)
			}
		})
	}
}

func TestEvalConcurrent(t *testing.T) {
	e, err := Compile(exprConditions[0].src, exprCondResolve)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	for g := 0; g < 8; g++ {
		go func() {
			ok := true
			for i := 0; i < 1000; i++ {
				env := exprCondEnv(i % len(exprCondEnvs))
				got, err := e.Truth(env)
				ok = ok && err == nil && got == (i%len(exprCondEnvs) != 3)
			}
			done <- ok
		}()
	}
	for g := 0; g < 8; g++ {
		if !<-done {
			t.Errorf("concurrent Eval gave a wrong result")
		}
	}
}

func exprRange(start, stop, step int64) []Value {
	var vs []Value
	for i := start; i < stop; i += step {
		vs = append(vs, Int(i))
	}
	return vs
}

func TestEvalList(t *testing.T) {
	ints := func(xs ...int64) []Value {
		vs := []Value{}
		for _, x := range xs {
			vs = append(vs, Int(x))
		}
		return vs
	}
	tests := []struct {
		name string
		want []Value
	}{
		{"[16*i for i in range(1,9)]", ints(16, 32, 48, 64, 80, 96, 112, 128)},
		{"range(1, 33)", ints(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32)},
		{"list(range(0,10,2))", ints(0, 2, 4, 6, 8)},
		{"range(10, 0, -3)", ints(10, 7, 4, 1)},
		{"range(5, 1)", ints()},
		{"range(True, 3)", ints(1, 2)},
		{"[1, 2.5, True, 'a']", []Value{Int(1), Float(2.5), Bool(true), Str("a")}},
		{`["x", 'y',]`, []Value{Str("x"), Str("y")}},
		{"[2**i for i in range(0,5) if i != 3]", ints(1, 2, 4, 16)},
		{"[2**i for i in range(0, 5) if i != 3]", ints(1, 2, 4, 16)},
		{"[x*2 for x in [1,2,3]]", ints(2, 4, 6)},
		{"[x/2 for x in (1, 2)]", []Value{Float(0.5), Float(1)}},
		{"[i for i in range(10) if i % 2 if i > 3]", ints(5, 7, 9)},
		{"[i if i < 2 else -i for i in range(4)]", ints(0, 1, -2, -3)},
		{"[1/0 for i in []]", ints()},
		{"[]", ints()},
		{"()", ints()},
		{"list()", ints()},
		{"(1, 2)", ints(1, 2)},
		{"[12*1024, -3, -1.5, 1e3]", []Value{Int(12288), Int(-3), Float(-1.5), Float(1000)}},
		{" [ 16 , 32 ] ", ints(16, 32)},
		{"[True, False]", []Value{Bool(true), Bool(false)}},
		{"[min(4, 2), max(1.5, 1), abs(-3)]", []Value{Int(2), Float(1.5), Int(3)}},
		{"[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))", append(ints(1, 2, 4, 8, 16), exprRange(32, 1025, 32)...)},
		{"[1] + [2] + range(3, 4) + [i for i in (4, 5)]", ints(1, 2, 3, 4, 5)},
		{"[0] * 3", ints(0, 0, 0)},
		{"2 * [1, 2] + [3]", ints(1, 2, 1, 2, 3)},
		{"[1] * -1", ints()},
		{"[x for x in [1] + [2]]", ints(1, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EvalList(tt.name)
			if err != nil || !slices.EqualFunc(got, tt.want, sameValue) {
				t.Errorf("Eval(%q) = %v, %v, want %v", tt.name, got, err, tt.want)
			}
		})
	}
}

func TestEvalListErrors(t *testing.T) {
	tests := []struct {
		name   string
		col    int // 0 for a runtime error
		substr string
	}{
		{"", 1, "empty expression"},
		{"5", 1, "expected a list"},
		{"  a", 3, "expected a list"},
		{"[1, 2", 1, "was never closed"},
		{"[a]", 2, `unknown name "a"`},
		{"[j for i in range(3)]", 2, `unknown name "j"`},
		{"[i for i in range(i)]", 19, `unknown name "i"`},
		{"[[1], 2]", 2, "nested lists"},
		{"[i for i in 5]", 13, "must loop over a list or range"},
		{"[x for x in range(3) for y in range(2)]", 22, "nested comprehensions"},
		{"[[x for x in range(3)] for y in range(2)]", 2, "nested comprehensions"},
		{"[1 +]", 5, `unexpected "]"`},
		{"range()", 1, "takes 1 to 3 arguments"},
		{"range(1, 2, 3, 4)", 1, "takes 1 to 3 arguments"},
		{"list(5)", 6, "argument must be a list"},
		{"[1/0]", 0, "division by zero"},
		{"range(1.5)", 0, "cannot be interpreted as an integer"},
		{"range('a')", 0, "cannot be interpreted as an integer"},
		{"range(0, 10, 0)", 0, "must not be zero"},
		{"range(10**18)", 0, "more than the limit"},
		{"[10 // i for i in range(-1, 2)]", 0, "division by zero"},
		{"[i for i in range(3) if i < 'a']", 0, "not supported between"},
		{"[1] + 2", 1, "expected a list"},
		{"[1] * 2.0", 0, "can't multiply sequence by non-int of type 'float'"},
		{"[1] * [2]", 1, "expected a list"},
		{"[0] * 10**7", 0, "more than the limit"},
		{"range(10**6) + range(10**6)", 0, "more than the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EvalList(tt.name)
			if err == nil || !strings.Contains(err.Error(), tt.substr) {
				t.Fatalf("EvalList(%q) = %v, %v, want error containing %q", tt.name, got, err, tt.substr)
			}
			var se *SyntaxError
			isSyntax := errors.As(err, &se)
			if tt.col == 0 {
				if isSyntax || !strings.Contains(err.Error(), tt.name) {
					t.Errorf("EvalList(%q) error = %v, want a plain error naming the source", tt.name, err)
				}
				return
			}
			if !isSyntax || se.Col != tt.col {
				t.Errorf("EvalList(%q) error = %v, want *SyntaxError at column %d", tt.name, err, tt.col)
			}
		})
	}
}
