package builtin

import (
	"math"
	"sync/atomic"

	"github.com/quasim/quasim/precision"
)

// The accumulators of reduce's chunked path, which sums a block from a
// reduced-precision input (decoded storeBlock values at a time) or with an
// FP16 or BF16 accumulator. Each keeps its unroll partial sums (len(s) of
// them: 1, 2, 4 or 8) across the chunks of a block, so a block is summed
// in exactly the order of the FP32 path: partial sum j takes values j,
// j+U, j+2U, ..., the leftovers of the block (fewer than U, in its last
// chunk) go into the first, and a tree combines them. Only the last chunk
// of a block may hold a number of values that U does not divide.

// add32 adds a's full groups of len(s) values into the float32 partial
// sums s and returns the values left over.
func add32(s []float32, a []float32) []float32 {
	switch len(s) {
	case 8:
		s0, s1, s2, s3, s4, s5, s6, s7 := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
		for len(a) >= 8 {
			s0 += a[0]
			s1 += a[1]
			s2 += a[2]
			s3 += a[3]
			s4 += a[4]
			s5 += a[5]
			s6 += a[6]
			s7 += a[7]
			a = a[8:]
		}
		s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7] = s0, s1, s2, s3, s4, s5, s6, s7
	case 4:
		s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
		for len(a) >= 4 {
			s0 += a[0]
			s1 += a[1]
			s2 += a[2]
			s3 += a[3]
			a = a[4:]
		}
		s[0], s[1], s[2], s[3] = s0, s1, s2, s3
	case 2:
		s0, s1 := s[0], s[1]
		for len(a) >= 2 {
			s0 += a[0]
			s1 += a[1]
			a = a[2:]
		}
		s[0], s[1] = s0, s1
	default:
		s0 := s[0]
		for len(a) >= 1 {
			s0 += a[0]
			a = a[1:]
		}
		s[0] = s0
	}
	return a
}

// add64 is add32 with float64 partial sums.
func add64(s []float64, a []float32) []float32 {
	switch len(s) {
	case 8:
		s0, s1, s2, s3, s4, s5, s6, s7 := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
		for len(a) >= 8 {
			s0 += float64(a[0])
			s1 += float64(a[1])
			s2 += float64(a[2])
			s3 += float64(a[3])
			s4 += float64(a[4])
			s5 += float64(a[5])
			s6 += float64(a[6])
			s7 += float64(a[7])
			a = a[8:]
		}
		s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7] = s0, s1, s2, s3, s4, s5, s6, s7
	case 4:
		s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
		for len(a) >= 4 {
			s0 += float64(a[0])
			s1 += float64(a[1])
			s2 += float64(a[2])
			s3 += float64(a[3])
			a = a[4:]
		}
		s[0], s[1], s[2], s[3] = s0, s1, s2, s3
	case 2:
		s0, s1 := s[0], s[1]
		for len(a) >= 2 {
			s0 += float64(a[0])
			s1 += float64(a[1])
			a = a[2:]
		}
		s[0], s[1] = s0, s1
	default:
		s0 := s[0]
		for len(a) >= 1 {
			s0 += float64(a[0])
			a = a[1:]
		}
		s[0] = s0
	}
	return a
}

// addKahan is add32 with Kahan-compensated float32 partial sums (s, c).
func addKahan(s, c []float32, a []float32) []float32 {
	switch len(s) {
	case 8:
		s0, s1, s2, s3, s4, s5, s6, s7 := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
		c0, c1, c2, c3, c4, c5, c6, c7 := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
		for len(a) >= 8 {
			y0 := a[0] - c0
			t0 := s0 + y0
			c0 = (t0 - s0) - y0
			s0 = t0
			y1 := a[1] - c1
			t1 := s1 + y1
			c1 = (t1 - s1) - y1
			s1 = t1
			y2 := a[2] - c2
			t2 := s2 + y2
			c2 = (t2 - s2) - y2
			s2 = t2
			y3 := a[3] - c3
			t3 := s3 + y3
			c3 = (t3 - s3) - y3
			s3 = t3
			y4 := a[4] - c4
			t4 := s4 + y4
			c4 = (t4 - s4) - y4
			s4 = t4
			y5 := a[5] - c5
			t5 := s5 + y5
			c5 = (t5 - s5) - y5
			s5 = t5
			y6 := a[6] - c6
			t6 := s6 + y6
			c6 = (t6 - s6) - y6
			s6 = t6
			y7 := a[7] - c7
			t7 := s7 + y7
			c7 = (t7 - s7) - y7
			s7 = t7
			a = a[8:]
		}
		s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7] = s0, s1, s2, s3, s4, s5, s6, s7
		c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7] = c0, c1, c2, c3, c4, c5, c6, c7
	case 4:
		s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
		c0, c1, c2, c3 := c[0], c[1], c[2], c[3]
		for len(a) >= 4 {
			y0 := a[0] - c0
			t0 := s0 + y0
			c0 = (t0 - s0) - y0
			s0 = t0
			y1 := a[1] - c1
			t1 := s1 + y1
			c1 = (t1 - s1) - y1
			s1 = t1
			y2 := a[2] - c2
			t2 := s2 + y2
			c2 = (t2 - s2) - y2
			s2 = t2
			y3 := a[3] - c3
			t3 := s3 + y3
			c3 = (t3 - s3) - y3
			s3 = t3
			a = a[4:]
		}
		s[0], s[1], s[2], s[3] = s0, s1, s2, s3
		c[0], c[1], c[2], c[3] = c0, c1, c2, c3
	case 2:
		s0, s1 := s[0], s[1]
		c0, c1 := c[0], c[1]
		for len(a) >= 2 {
			y0 := a[0] - c0
			t0 := s0 + y0
			c0 = (t0 - s0) - y0
			s0 = t0
			y1 := a[1] - c1
			t1 := s1 + y1
			c1 = (t1 - s1) - y1
			s1 = t1
			a = a[2:]
		}
		s[0], s[1] = s0, s1
		c[0], c[1] = c0, c1
	default:
		s0 := s[0]
		c0 := c[0]
		for len(a) >= 1 {
			y0 := a[0] - c0
			t0 := s0 + y0
			c0 = (t0 - s0) - y0
			s0 = t0
			a = a[1:]
		}
		s[0] = s0
		c[0] = c0
	}
	return a
}

// addRound is add32 with partial sums held in a narrower format: each
// addition is made in float32 and rounded by r, as a register of that
// format would hold it.
func addRound(s []float32, a []float32, r func(float32) float32) []float32 {
	switch len(s) {
	case 8:
		s0, s1, s2, s3, s4, s5, s6, s7 := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
		for len(a) >= 8 {
			s0 = r(s0 + a[0])
			s1 = r(s1 + a[1])
			s2 = r(s2 + a[2])
			s3 = r(s3 + a[3])
			s4 = r(s4 + a[4])
			s5 = r(s5 + a[5])
			s6 = r(s6 + a[6])
			s7 = r(s7 + a[7])
			a = a[8:]
		}
		s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7] = s0, s1, s2, s3, s4, s5, s6, s7
	case 4:
		s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
		for len(a) >= 4 {
			s0 = r(s0 + a[0])
			s1 = r(s1 + a[1])
			s2 = r(s2 + a[2])
			s3 = r(s3 + a[3])
			a = a[4:]
		}
		s[0], s[1], s[2], s[3] = s0, s1, s2, s3
	case 2:
		s0, s1 := s[0], s[1]
		for len(a) >= 2 {
			s0 = r(s0 + a[0])
			s1 = r(s1 + a[1])
			a = a[2:]
		}
		s[0], s[1] = s0, s1
	default:
		s0 := s[0]
		for len(a) >= 1 {
			s0 = r(s0 + a[0])
			a = a[1:]
		}
		s[0] = s0
	}
	return a
}

// tree32 combines partial sums pairwise: (s0+s1)+(s2+s3) for four.
func tree32(s []float32) float32 {
	if len(s) == 1 {
		return s[0]
	}
	h := len(s) / 2
	return tree32(s[:h]) + tree32(s[h:])
}

func tree64(s []float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	h := len(s) / 2
	return tree64(s[:h]) + tree64(s[h:])
}

// treeRound is tree32 with every addition rounded by r.
func treeRound(s []float32, r func(float32) float32) float32 {
	if len(s) == 1 {
		return s[0]
	}
	h := len(s) / 2
	return r(treeRound(s[:h], r) + treeRound(s[h:], r))
}

// roundFP16 is precision.FP16.Round with a fast path for FP16's normal
// range (2^-14 <= |x| < 2^16): round the float32 significand to 10 bits,
// ties to even, and overflow past 65504 to Inf.
func roundFP16(x float32) float32 {
	b := math.Float32bits(x)
	if (b>>23)&0xff-113 < 30 {
		b += 0xfff + (b>>13)&1
		b &^= 0x1fff
		if b&0x7fffffff >= 0x47800000 { // 65536: past 65504 + half an ulp
			b = b&0x80000000 | 0x7f800000
		}
		return math.Float32frombits(b)
	}
	return precision.FP16.Round(x)
}

// roundBF16 is precision.BF16.Round.
func roundBF16(x float32) float32 { return precision.DecodeBF16(precision.EncodeBF16(x)) }

// chunkedReduce is reduce's runner for a reduced-precision input or an
// FP16 or BF16 accumulator: every block is read storeBlock values at a
// time (decoded from the stored input into a per-worker buffer, or
// straight from A when the input is FP32) and summed by the config's
// accumulator in the FP32 path's order.
func chunkedReduce(cfg reduceConfig, n int) runner {
	nb := ceilDiv(n, cfg.block)
	u := cfg.unroll
	bufs := make([][storeBlock]float32, cfg.workers)
	p32 := make([]float32, nb) // float32, fp16, bf16: block partials
	p64 := make([]float64, nb)
	pc := make([]float32, nb) // kahan: the partials' compensations
	fused := fused8(cfg)
	var r func(float32) float32
	switch cfg.acc {
	case accFP16:
		r = roundFP16
	case accBF16:
		r = roundBF16
	}
	return func(in Inputs, out []float32) {
		var st *stored
		if cfg.input != precision.FP32 {
			var err error
			if st, err = in.storedA(cfg.input); err != nil {
				panic(err) // NaN or Inf in an integer format: Run reports it
			}
		}
		var next atomic.Int64
		parallel(cfg.workers, func(wk int) {
			buf := &bufs[wk]
			s32 := make([]float32, u)
			s64 := make([]float64, u)
			c32 := make([]float32, u)
			for {
				b := int(next.Add(1) - 1)
				if b >= nb || in.stopped() {
					return
				}
				clear(s32)
				clear(s64)
				clear(c32)
				lo, hi := b*cfg.block, min((b+1)*cfg.block, n)
				for c := lo; c < hi; c += storeBlock {
					e := min(c+storeBlock, hi)
					from := c
					if fused != nil {
						// Decoded and added in one pass; the few left
						// over (the block's last chunk only) below.
						if from = e - fused(s32, st, c, e); from == e {
							continue
						}
					}
					var a []float32
					if st == nil {
						a = in.A[from:e]
					} else {
						a = buf[:e-from]
						st.decode(a, from)
					}
					switch {
					case r != nil:
						for _, x := range addRound(s32, a, r) {
							s32[0] = r(s32[0] + x)
						}
					case cfg.acc == accFloat64:
						for _, x := range add64(s64, a) {
							s64[0] += float64(x)
						}
					case cfg.acc == accKahan:
						for _, x := range addKahan(s32, c32, a) {
							kahanAdd(&s32[0], &c32[0], x)
						}
					default:
						for _, x := range add32(s32, a) {
							s32[0] += x
						}
					}
				}
				switch {
				case r != nil:
					p32[b] = treeRound(s32, r)
				case cfg.acc == accFloat64:
					p64[b] = tree64(s64)
				case cfg.acc == accKahan:
					for j := 1; j < u; j++ {
						kahanMerge(&s32[0], &c32[0], s32[j], c32[j])
					}
					p32[b], pc[b] = s32[0], c32[0]
				default:
					p32[b] = tree32(s32)
				}
			}
		})
		switch {
		case r != nil:
			var s float32
			for _, x := range p32 {
				s = r(s + x)
			}
			out[0] = s
		case cfg.acc == accFloat64:
			var s float64
			for _, x := range p64 {
				s += x
			}
			out[0] = float32(s)
		case cfg.acc == accKahan:
			var s, c float32
			for b := range p32 {
				kahanMerge(&s, &c, p32[b], pc[b])
			}
			out[0] = s - c
		default:
			var s float32
			for _, x := range p32 {
				s += x
			}
			out[0] = s
		}
	}
}

// fused8 returns, for float32 accumulation with 8 partial sums from an
// input stored in INT8, a function that decodes and adds a chunk's full
// groups of 8 in one pass (no buffer), returning how many values it left;
// nil for any other config. It adds exactly what the buffered path adds,
// in the same order. (BF16 fused the same way took 8 times the CPU time of
// FP32 on this VM's AMD EPYC, more than through the buffer: each value
// moves from an integer register to a float one.)
func fused8(cfg reduceConfig) func(s []float32, st *stored, lo, hi int) int {
	if cfg.acc != accFloat32 || cfg.unroll != 8 {
		return nil
	}
	switch cfg.input {
	case precision.INT8:
		return func(s []float32, st *stored, lo, hi int) int {
			q := st.i8[lo:hi]
			sc := st.scale(lo)
			s0, s1, s2, s3, s4, s5, s6, s7 := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
			for len(q) >= 8 {
				s0 += float32(q[0]) * sc
				s1 += float32(q[1]) * sc
				s2 += float32(q[2]) * sc
				s3 += float32(q[3]) * sc
				s4 += float32(q[4]) * sc
				s5 += float32(q[5]) * sc
				s6 += float32(q[6]) * sc
				s7 += float32(q[7]) * sc
				q = q[8:]
			}
			s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7] = s0, s1, s2, s3, s4, s5, s6, s7
			return len(q)
		}
	}
	return nil
}
