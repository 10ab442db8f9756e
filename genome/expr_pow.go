package genome

import (
	"math"
	"math/big"
)

// This file computes float ** correctly rounded, as C's pow does, in
// double-double arithmetic (exDD).

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
