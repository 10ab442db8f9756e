package precision

import "math"

// EncodeBF16 rounds x to bfloat16 (nearest even) and gives its bits. A NaN
// stays a quiet NaN with x's sign.
func EncodeBF16(x float32) uint16 {
	b := math.Float32bits(x)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it one even if rounding would carry
		return uint16(b>>16) | 0x0040
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// DecodeBF16 gives the float32 of bfloat16 bits (exact).
func DecodeBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// EncodeFP16 rounds x to IEEE binary16 (nearest even, overflow to Inf,
// subnormals kept) and gives its bits.
func EncodeFP16(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	switch {
	case exp == 0xff && man != 0: // NaN: quiet, keep the top fraction bits
		return sign | 0x7e00 | uint16(man>>13)
	case exp == 0xff:
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // biased binary16 exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal in binary16 (or zero): shift the full significand.
		if e < -10 {
			return sign // below half the smallest subnormal: rounds to 0
		}
		m := man | 0x800000
		shift := uint(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry into the exponent is right, up to Inf
	}
	return sign | uint16(h)
}

// DecodeFP16 gives the float32 of binary16 bits (exact).
func DecodeFP16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		v := float32(man) * (1.0 / (1 << 24)) // man * 2^-24, exact
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// EncodeE4M3 rounds x to OCP FP8 E4M3 (nearest even; past ±448, and ±Inf,
// saturate to ±448; NaN gives 0x7f or 0xff) and gives its bits.
func EncodeE4M3(x float32) uint8 {
	sign := uint8(math.Float32bits(x)>>24) & 0x80
	if x != x {
		return sign | 0x7f
	}
	r := roundFloat(float64(x), specs[FP8E4M3])
	a := math.Abs(r)
	if a == 0 {
		return sign
	}
	_, exp := math.Frexp(a)
	e := exp - 1
	if e < -6 { // subnormal: a = m * 2^-9
		return sign | uint8(a*512)
	}
	m := uint8(math.Ldexp(a, 3-e)) - 8 // 1.mmm * 2^e
	return sign | uint8(e+7)<<3 | m
}

// DecodeE4M3 gives the float32 of E4M3 bits (exact); S.1111.111 is NaN.
func DecodeE4M3(b uint8) float32 {
	neg := b&0x80 != 0
	e := int(b>>3) & 0xf
	m := float64(b & 7)
	var v float64
	switch {
	case e == 0xf && b&7 == 7:
		v = math.NaN()
	case e == 0:
		v = m / 512
	default:
		v = math.Ldexp(1+m/8, e-7)
	}
	if neg {
		v = -v
	}
	return float32(v)
}
