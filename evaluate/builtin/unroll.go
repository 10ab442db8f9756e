package builtin

// The manually unrolled inner loops the kernels choose between. Go does not
// unroll or vectorise loops itself, so each unroll factor is its own function.

// axpyFunc adds Σ_r a[r]·B_r to c, where B_r = b[off+r*ld : off+r*ld+len(c)]
// and r runs over len(a) rows.
type axpyFunc func(c, b []float32, off, ld int, a []float32)

// dotFunc returns Σ_i a[i]·b[off+i*ld]; the contiguous variants ignore ld
// and read b[off : off+len(a)].
type dotFunc func(a, b []float32, off, ld int) float32

func axpyByUnroll(u int) axpyFunc {
	switch u {
	case 2:
		return axpy2
	case 4:
		return axpy4
	case 8:
		return axpy8
	}
	return axpy1
}

func dotStridedByUnroll(u int) dotFunc {
	switch u {
	case 2:
		return dotS2
	case 4:
		return dotS4
	case 8:
		return dotS8
	}
	return dotS1
}

func dotContigByUnroll(u int) dotFunc {
	switch u {
	case 2:
		return dotC2
	case 4:
		return dotC4
	case 8:
		return dotC8
	}
	return dotC1
}

func axpy1(c, b []float32, off, _ int, a []float32) {
	a0 := a[0]
	b0 := b[off:][:len(c)]
	for j := range c {
		c[j] += a0 * b0[j]
	}
}

func axpy2(c, b []float32, off, ld int, a []float32) {
	a = a[:2]
	n := len(c)
	b0 := b[off:][:n]
	b1 := b[off+ld:][:n]
	a0, a1 := a[0], a[1]
	for j := range c {
		c[j] += a0*b0[j] + a1*b1[j]
	}
}

func axpy4(c, b []float32, off, ld int, a []float32) {
	a = a[:4]
	n := len(c)
	b0 := b[off:][:n]
	b1 := b[off+ld:][:n]
	b2 := b[off+2*ld:][:n]
	b3 := b[off+3*ld:][:n]
	a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
	for j := range c {
		c[j] += (a0*b0[j] + a1*b1[j]) + (a2*b2[j] + a3*b3[j])
	}
}

func axpy8(c, b []float32, off, ld int, a []float32) {
	a = a[:8]
	n := len(c)
	b0 := b[off:][:n]
	b1 := b[off+ld:][:n]
	b2 := b[off+2*ld:][:n]
	b3 := b[off+3*ld:][:n]
	b4 := b[off+4*ld:][:n]
	b5 := b[off+5*ld:][:n]
	b6 := b[off+6*ld:][:n]
	b7 := b[off+7*ld:][:n]
	a0, a1, a2, a3, a4, a5, a6, a7 := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
	for j := range c {
		c[j] += ((a0*b0[j] + a1*b1[j]) + (a2*b2[j] + a3*b3[j])) +
			((a4*b4[j] + a5*b5[j]) + (a6*b6[j] + a7*b7[j]))
	}
}

func dotC1(a, b []float32, off, _ int) float32 {
	b = b[off:][:len(a)]
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

func dotC2(a, b []float32, off, _ int) float32 {
	b = b[off:][:len(a)]
	var s0, s1 float32
	for len(a) >= 2 && len(b) >= 2 {
		s0 += a[0] * b[0]
		s1 += a[1] * b[1]
		a, b = a[2:], b[2:]
	}
	if len(a) > 0 && len(b) > 0 {
		s0 += a[0] * b[0]
	}
	return s0 + s1
}

func dotC4(a, b []float32, off, _ int) float32 {
	b = b[off:][:len(a)]
	var s0, s1, s2, s3 float32
	for len(a) >= 4 && len(b) >= 4 {
		s0 += a[0] * b[0]
		s1 += a[1] * b[1]
		s2 += a[2] * b[2]
		s3 += a[3] * b[3]
		a, b = a[4:], b[4:]
	}
	for i, x := range a {
		s0 += x * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func dotC8(a, b []float32, off, _ int) float32 {
	b = b[off:][:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(a) >= 8 && len(b) >= 8 {
		s0 += a[0] * b[0]
		s1 += a[1] * b[1]
		s2 += a[2] * b[2]
		s3 += a[3] * b[3]
		s4 += a[4] * b[4]
		s5 += a[5] * b[5]
		s6 += a[6] * b[6]
		s7 += a[7] * b[7]
		a, b = a[8:], b[8:]
	}
	for i, x := range a {
		s0 += x * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

func dotS1(a, b []float32, off, ld int) float32 {
	var s float32
	p := off
	for _, x := range a {
		s += x * b[p]
		p += ld
	}
	return s
}

func dotS2(a, b []float32, off, ld int) float32 {
	var s0, s1 float32
	p := off
	for len(a) >= 2 {
		s0 += a[0] * b[p]
		s1 += a[1] * b[p+ld]
		p += 2 * ld
		a = a[2:]
	}
	for _, x := range a {
		s0 += x * b[p]
		p += ld
	}
	return s0 + s1
}

func dotS4(a, b []float32, off, ld int) float32 {
	var s0, s1, s2, s3 float32
	p := off
	for len(a) >= 4 {
		s0 += a[0] * b[p]
		s1 += a[1] * b[p+ld]
		s2 += a[2] * b[p+2*ld]
		s3 += a[3] * b[p+3*ld]
		p += 4 * ld
		a = a[4:]
	}
	for _, x := range a {
		s0 += x * b[p]
		p += ld
	}
	return (s0 + s1) + (s2 + s3)
}

func dotS8(a, b []float32, off, ld int) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	p := off
	for len(a) >= 8 {
		s0 += a[0] * b[p]
		s1 += a[1] * b[p+ld]
		s2 += a[2] * b[p+2*ld]
		s3 += a[3] * b[p+3*ld]
		s4 += a[4] * b[p+4*ld]
		s5 += a[5] * b[p+5*ld]
		s6 += a[6] * b[p+6*ld]
		s7 += a[7] * b[p+7*ld]
		p += 8 * ld
		a = a[8:]
	}
	for _, x := range a {
		s0 += x * b[p]
		p += ld
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}
