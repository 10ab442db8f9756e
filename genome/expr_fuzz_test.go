package genome

import (
	"errors"
	"math"
	"slices"
	"testing"
	"unicode/utf8"
)

var exprFuzzSeeds = []string{
	"use_padding==0 or block_size_x % 32 != 0",
	"32 <= a * b <= 1024",
	"a == 0 or (((b*c+(a-1)))*((b*c+(a-1)))) < 12*1024",
	"a % ((b*c)/a) == 0",
	"a % (b*c) == 0",
	"-7 // 2 + -7 % 2 + 7 % -2 + -7.5 // 2 + -7.5 % 2",
	"-2**2 + 2**-1 + 2**3**2",
	"0 and 1/0",
	"not a < b <= c != 3",
	"min(a, b, 2.5) + max([a, c]) + abs(-b)",
	"int('12') + float(' 1e3 ') + round(2.5) + bool(c) + len",
	"'abc' * 3 + \"x\" < 'b'",
	"a in [1, 2, 3] or b not in range(0, 10, 2)",
	"a if b else c",
	"~a & b | c ^ 1 << 2 >> 1",
	"(1, 2",
	"'''x'''",
	"r'\\n' + u'é'",
	"0x1F + 0o17 + 0b101 + 1_000 + .5 + 1e-3",
	"a +* b",
	"",
}

func exprFuzzResolve(name string) (int, bool) {
	switch name {
	case "a", "b", "c":
		return int(name[0] - 'a'), true
	}
	return 0, false
}

var exprFuzzEnvs = [][]Value{
	{Int(3), Int(-2), Int(7)},
	{Int(0), Float(-2.5), Str("x")},
	{Bool(true), Int(math.MinInt64), Float(math.NaN())},
	{Int(math.MaxInt64), Float(math.Inf(-1)), Str("")},
	{{}, Bool(false), Float(0)},
}

// Int-only environments take the fast path, which must agree with the general one.
var exprFuzzIntEnvs = [][]Value{
	{Int(3), Int(-2), Int(7)},
	{Int(0), Int(1), Int(-1)},
	{Int(math.MinInt64), Int(math.MaxInt64), Int(64)},
}

func FuzzCompile(f *testing.F) {
	for _, s := range exprFuzzSeeds {
		f.Add(s)
	}
	for _, c := range exprConditions {
		f.Add(c.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Compile(src, exprFuzzResolve)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%q) error %v is not a *SyntaxError", src, err)
			}
			if se.Col < 1 || se.Col > len(src)+1 || se.Col > utf8.RuneCountInString(src)+1 {
				t.Fatalf("Compile(%q) error column %d out of range", src, se.Col)
			}
			if se.Expr != src {
				t.Fatalf("Compile(%q) error names %q", src, se.Expr)
			}
			return
		}
		if e.String() != src {
			t.Fatalf("String() = %q, want %q", e.String(), src)
		}
		slots := e.Slots()
		if !slices.IsSorted(slots) || len(slots) > 3 || len(slots) != len(e.Names()) {
			t.Fatalf("Compile(%q): Slots() = %v, Names() = %v", src, slots, e.Names())
		}
		for k, env := range exprFuzzEnvs {
			v, err := e.Eval(env)
			// The last env holds an invalid value, which a bare name passes through.
			if err == nil && (v.Kind < KindInt || v.Kind > KindString) && k != len(exprFuzzEnvs)-1 {
				t.Fatalf("Eval(%q) = invalid kind %v", src, v.Kind)
			}
			if _, terr := e.Truth(env); (terr == nil) != (err == nil) {
				t.Fatalf("Truth(%q) error %v, Eval error %v", src, terr, err)
			}
		}
		for _, env := range exprFuzzIntEnvs {
			got, err := e.Eval(env)
			want, werr := e.eval(env)
			if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() || !sameValue(got, want) {
				t.Fatalf("Eval(%q) = %v, %v; general tree gives %v, %v", src, showValue(got), err, showValue(want), werr)
			}
			truth, terr := e.Truth(env)
			if (terr == nil) != (werr == nil) || terr == nil && truth != want.Truth() {
				t.Fatalf("Truth(%q) = %v, %v; general tree gives %v, %v", src, truth, terr, want, werr)
			}
		}
		if _, err := e.Eval(nil); err == nil && len(slots) > 0 {
			t.Fatalf("Eval(%q) with a nil env: want error", src)
		}
	})
}

func FuzzEvalList(f *testing.F) {
	for _, s := range []string{
		"[16*i for i in range(1,9)]", "range(1, 33)", "list(range(0,10,2))", "[1, 2.5, True, 'a']",
		"[2**i for i in range(0,5) if i != 3]", "[]", "[x*2 for x in [1,2,3]]",
		"[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))", "[0] * 4", "range(10, 0, -3)", "(1,)",
		"[i for i in range(i)]", "[1/0]", "range(1.5)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		vals, err := EvalList(src)
		if err != nil {
			var se *SyntaxError
			if errors.As(err, &se) && (se.Col < 1 || se.Col > len(src)+1) {
				t.Fatalf("EvalList(%q) error column %d out of range", src, se.Col)
			}
			return
		}
		if len(vals) > exMaxList {
			t.Fatalf("EvalList(%q) returned %d values", src, len(vals))
		}
		for _, v := range vals {
			if v.Kind < KindInt || v.Kind > KindString {
				t.Fatalf("EvalList(%q) returned invalid kind %v", src, v.Kind)
			}
		}
	})
}
