package builtin

import (
	"sync/atomic"

	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// reduce's accumulators, most accurate first (precision.StageAccumulation
// ranks them so).
const (
	accFloat64 = "float64"
	accKahan   = "kahan"
	accFloat32 = "float32"
	accFP16    = "fp16"
	accBF16    = "bf16"
)

// reduceDef is the sum of an fp32 n-vector; the output has one value.
//
// The vector is cut into blocks of block values. Workers take the next block
// from a shared atomic counter and store its partial sum; the partials are
// then added in block order, so the result does not depend on scheduling and
// is bitwise reproducible. unroll is the number of independent partial sums
// inside a block. acc is the accumulator: float64 (float64 partial sums,
// rounded once at the end), kahan (Kahan-compensated float32 sums, nearly
// as accurate as float64: four dependent operations per value), float32
// (error growing with n), or fp16 and bf16 (every addition rounded to that
// format, as FP16 or BF16 hardware would: emulated, so slow here). input is
// the format the vector is stored in (see stored): the kernel reads the
// stored values and converts them while summing.
func reduceDef() def {
	return def{
		name:     "reduce",
		dims:     []string{"n"},
		defaults: [][]int{{1 << 21}, {1 << 22}, {1 << 23}},
		params: []genome.Param{
			intParam("block", 0, 256, 1024, 4096, 16384, 65536, 262144),
			intParam("unroll", 0, 1, 2, 4, 8),
			intParam("workers", 0, 1, 2, 4, 8),
			strParam("acc", 2, accFloat64, accKahan, accFloat32, accFP16, accBF16),
			formatParam("input", precision.FP32, precision.FP16, precision.BF16, precision.INT8, precision.FP8E4M3, precision.INT4),
		},
		precision: map[string]precision.Stage{"input": precision.StageInput, "acc": precision.StageAccumulation},
		cons: []string{
			// A block never exceeds the vector, except that the smallest
			// block is always allowed so tiny problems keep a space.
			"block <= n or block == 256",
			// Every worker gets at least one block.
			"workers == 1 or block * workers <= n",
		},
		sizes: func(d []int) (int, int, int) {
			return d[0], 0, 1
		},
		flops:   func(d []int) float64 { return float64(d[0] - 1) },
		prepare: prepareReduce,
		ref:     refReduce,
		verify:  reduceVerify(),
	}
}

type reduceConfig struct {
	block, unroll, workers int
	acc                    string
	input                  precision.Format
}

func newReduceConfig(v map[string]genome.Value) reduceConfig {
	in, err := precision.ParseFormat(v["input"].S)
	if err != nil {
		panic(err) // the space holds only format names
	}
	return reduceConfig{
		block:   int(v["block"].I),
		unroll:  int(v["unroll"].I),
		workers: int(v["workers"].I),
		acc:     v["acc"].S,
		input:   in,
	}
}

func prepareReduce(v map[string]genome.Value, d []int) runner {
	cfg := newReduceConfig(v)
	n := d[0]
	if cfg.input != precision.FP32 || cfg.acc == accFP16 || cfg.acc == accBF16 {
		return chunkedReduce(cfg, n)
	}
	nb := ceilDiv(n, cfg.block)
	// forBlocks hands out blocks to the workers; each block is processed by
	// exactly one call of fn.
	forBlocks := func(in Inputs, fn func(b int, seg []float32)) {
		a := in.A
		var next atomic.Int64
		parallel(cfg.workers, func(int) {
			for {
				b := int(next.Add(1) - 1)
				if b >= nb || in.stopped() {
					return
				}
				fn(b, a[b*cfg.block:min((b+1)*cfg.block, n)])
			}
		})
	}

	switch cfg.acc {
	case accFloat64:
		sum := sum64ByUnroll(cfg.unroll)
		part := make([]float64, nb)
		return func(in Inputs, out []float32) {
			forBlocks(in, func(b int, seg []float32) { part[b] = sum(seg) })
			var s float64
			for _, x := range part {
				s += x
			}
			out[0] = float32(s)
		}
	case accKahan:
		sum := kahanByUnroll(cfg.unroll)
		ps, pc := make([]float32, nb), make([]float32, nb)
		return func(in Inputs, out []float32) {
			forBlocks(in, func(b int, seg []float32) { ps[b], pc[b] = sum(seg) })
			var s, c float32
			for b := range ps {
				kahanMerge(&s, &c, ps[b], pc[b])
			}
			out[0] = s - c
		}
	default:
		sum := sum32ByUnroll(cfg.unroll)
		part := make([]float32, nb)
		return func(in Inputs, out []float32) {
			forBlocks(in, func(b int, seg []float32) { part[b] = sum(seg) })
			var s float32
			for _, x := range part {
				s += x
			}
			out[0] = s
		}
	}
}

// refReduce is the float64 loop.
func refReduce(d []int, in Inputs) []float64 {
	s := 0.0
	for _, x := range in.A[:d[0]] {
		s += float64(x)
	}
	return []float64{s}
}

func sum32ByUnroll(u int) func([]float32) float32 {
	switch u {
	case 2:
		return sum32x2
	case 4:
		return sum32x4
	case 8:
		return sum32x8
	}
	return sum32x1
}

func sum64ByUnroll(u int) func([]float32) float64 {
	switch u {
	case 2:
		return sum64x2
	case 4:
		return sum64x4
	case 8:
		return sum64x8
	}
	return sum64x1
}

func kahanByUnroll(u int) func([]float32) (float32, float32) {
	switch u {
	case 2:
		return kahanx2
	case 4:
		return kahanx4
	case 8:
		return kahanx8
	}
	return kahanx1
}

func sum32x1(a []float32) float32 {
	var s float32
	for _, x := range a {
		s += x
	}
	return s
}

func sum32x2(a []float32) float32 {
	var s0, s1 float32
	for len(a) >= 2 {
		s0 += a[0]
		s1 += a[1]
		a = a[2:]
	}
	for _, x := range a {
		s0 += x
	}
	return s0 + s1
}

func sum32x4(a []float32) float32 {
	var s0, s1, s2, s3 float32
	for len(a) >= 4 {
		s0 += a[0]
		s1 += a[1]
		s2 += a[2]
		s3 += a[3]
		a = a[4:]
	}
	for _, x := range a {
		s0 += x
	}
	return (s0 + s1) + (s2 + s3)
}

func sum32x8(a []float32) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
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
	for _, x := range a {
		s0 += x
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

func sum64x1(a []float32) float64 {
	var s float64
	for _, x := range a {
		s += float64(x)
	}
	return s
}

func sum64x2(a []float32) float64 {
	var s0, s1 float64
	for len(a) >= 2 {
		s0 += float64(a[0])
		s1 += float64(a[1])
		a = a[2:]
	}
	for _, x := range a {
		s0 += float64(x)
	}
	return s0 + s1
}

func sum64x4(a []float32) float64 {
	var s0, s1, s2, s3 float64
	for len(a) >= 4 {
		s0 += float64(a[0])
		s1 += float64(a[1])
		s2 += float64(a[2])
		s3 += float64(a[3])
		a = a[4:]
	}
	for _, x := range a {
		s0 += float64(x)
	}
	return (s0 + s1) + (s2 + s3)
}

func sum64x8(a []float32) float64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
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
	for _, x := range a {
		s0 += float64(x)
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// A Kahan sum is a pair (s, c) whose value is s - c: c holds what the
// additions into s rounded away.

// kahanAdd adds x to the Kahan sum (s, c).
func kahanAdd(s, c *float32, x float32) {
	y := x - *c
	t := *s + y
	*c = (t - *s) - y
	*s = t
}

// kahanMerge adds the Kahan sum (t, tc) to (s, c).
func kahanMerge(s, c *float32, t, tc float32) {
	kahanAdd(s, c, t)
	kahanAdd(s, c, -tc)
}

func kahanx1(a []float32) (float32, float32) {
	var s, c float32
	for _, x := range a {
		y := x - c
		t := s + y
		c = (t - s) - y
		s = t
	}
	return s, c
}

func kahanx2(a []float32) (float32, float32) {
	var s0, s1, c0, c1 float32
	for len(a) >= 2 {
		y0 := a[0] - c0
		y1 := a[1] - c1
		t0 := s0 + y0
		t1 := s1 + y1
		c0 = (t0 - s0) - y0
		c1 = (t1 - s1) - y1
		s0, s1 = t0, t1
		a = a[2:]
	}
	for _, x := range a {
		kahanAdd(&s0, &c0, x)
	}
	kahanMerge(&s0, &c0, s1, c1)
	return s0, c0
}

func kahanx4(a []float32) (float32, float32) {
	var s0, s1, s2, s3, c0, c1, c2, c3 float32
	for len(a) >= 4 {
		y0 := a[0] - c0
		y1 := a[1] - c1
		y2 := a[2] - c2
		y3 := a[3] - c3
		t0 := s0 + y0
		t1 := s1 + y1
		t2 := s2 + y2
		t3 := s3 + y3
		c0 = (t0 - s0) - y0
		c1 = (t1 - s1) - y1
		c2 = (t2 - s2) - y2
		c3 = (t3 - s3) - y3
		s0, s1, s2, s3 = t0, t1, t2, t3
		a = a[4:]
	}
	for _, x := range a {
		kahanAdd(&s0, &c0, x)
	}
	kahanMerge(&s0, &c0, s1, c1)
	kahanMerge(&s0, &c0, s2, c2)
	kahanMerge(&s0, &c0, s3, c3)
	return s0, c0
}

func kahanx8(a []float32) (float32, float32) {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	var c0, c1, c2, c3, c4, c5, c6, c7 float32
	for len(a) >= 8 {
		y0 := a[0] - c0
		y1 := a[1] - c1
		y2 := a[2] - c2
		y3 := a[3] - c3
		y4 := a[4] - c4
		y5 := a[5] - c5
		y6 := a[6] - c6
		y7 := a[7] - c7
		t0 := s0 + y0
		t1 := s1 + y1
		t2 := s2 + y2
		t3 := s3 + y3
		t4 := s4 + y4
		t5 := s5 + y5
		t6 := s6 + y6
		t7 := s7 + y7
		c0 = (t0 - s0) - y0
		c1 = (t1 - s1) - y1
		c2 = (t2 - s2) - y2
		c3 = (t3 - s3) - y3
		c4 = (t4 - s4) - y4
		c5 = (t5 - s5) - y5
		c6 = (t6 - s6) - y6
		c7 = (t7 - s7) - y7
		s0, s1, s2, s3, s4, s5, s6, s7 = t0, t1, t2, t3, t4, t5, t6, t7
		a = a[8:]
	}
	for _, x := range a {
		kahanAdd(&s0, &c0, x)
	}
	kahanMerge(&s0, &c0, s1, c1)
	kahanMerge(&s0, &c0, s2, c2)
	kahanMerge(&s0, &c0, s3, c3)
	kahanMerge(&s0, &c0, s4, c4)
	kahanMerge(&s0, &c0, s5, c5)
	kahanMerge(&s0, &c0, s6, c6)
	kahanMerge(&s0, &c0, s7, c7)
	return s0, c0
}
