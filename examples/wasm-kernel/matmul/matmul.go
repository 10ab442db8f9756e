package matmul

// Blocks are the block sizes a parameter may take.
var Blocks = []int64{8, 16, 32, 64}

// Inputs returns deterministic n x n inputs.
func Inputs(n int) (a, b []float32) {
	a, b = make([]float32, n*n), make([]float32, n*n)
	x := uint32(12345)
	for i := range a {
		x = x*1103515245 + 12345
		a[i] = float32((x>>8)%1000)/1000 - 0.5
		x = x*1103515245 + 12345
		b[i] = float32((x>>8)%1000)/1000 - 0.5
	}
	return a, b
}

// Multiply sets c = a*b, blocked by bi, bj, bk, with the i-k-j order
// inside a block when ikj is set and i-j-k otherwise.
func Multiply(n int, a, b, c []float32, bi, bj, bk int, ikj bool) {
	clear(c)
	for i0 := 0; i0 < n; i0 += bi {
		for k0 := 0; k0 < n; k0 += bk {
			for j0 := 0; j0 < n; j0 += bj {
				i1, j1, k1 := min(i0+bi, n), min(j0+bj, n), min(k0+bk, n)
				if ikj {
					for i := i0; i < i1; i++ {
						for k := k0; k < k1; k++ {
							x := a[i*n+k]
							row := c[i*n+j0 : i*n+j1]
							brow := b[k*n+j0 : k*n+j1]
							for j := range row {
								row[j] += x * brow[j]
							}
						}
					}
				} else {
					for i := i0; i < i1; i++ {
						for j := j0; j < j1; j++ {
							s := c[i*n+j]
							for k := k0; k < k1; k++ {
								s += a[i*n+k] * b[k*n+j]
							}
							c[i*n+j] = s
						}
					}
				}
			}
		}
	}
}

// Checksum is the sum of c in float64.
func Checksum(c []float32) float64 {
	s := 0.0
	for _, v := range c {
		s += float64(v)
	}
	return s
}
