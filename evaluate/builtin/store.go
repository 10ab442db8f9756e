package builtin

import (
	"fmt"
	"math"
	"sync"

	"github.com/quasim/quasim/precision"
)

// storeBlock is how many values share one scale when an input is stored
// in a reduced format. A scale costs 4 bytes per 256 values (1.6% of
// FP16's bytes, 3% of INT4's).
const storeBlock = 256

// stored is an input vector held as a stage that stores it in format f
// holds it: FP16 and BF16 in []uint16 (half of FP32's bytes), FP8 E4M3 and
// INT8 in bytes (a quarter), INT4 two to a byte (an eighth).
//
// FP16 and FP8 E4M3 values are stored divided by a power-of-two scale per
// block of storeBlock values, chosen so that the block's largest magnitude
// fits the format's range (as OCP's microscaling formats do): scaling by a
// power of two is exact, and a block never overflows or falls into the
// subnormals because its values are large or small overall. BF16 has
// FP32's range and needs no scale. INT8 and INT4 hold
// round(x/scale) with scale = amax/127 or amax/7 per block
// (precision.Quantize).
type stored struct {
	f      precision.Format
	n      int
	u16    []uint16
	u8     []uint8
	i8     []int8
	scales []float32 // per storeBlock values; nil for BF16
}

// storeCache keeps an Inputs' vectors as stored in each format, made on
// first use: a kernel reads its inputs already stored, as a real one
// reads data that the producer wrote in that format, so a run does not
// pay the conversion.
type storeCache struct {
	mu sync.Mutex
	m  map[storeKey]*stored
}

// storeKey names one input (A or B) stored in one format.
type storeKey struct {
	b bool // Inputs.B, else Inputs.A
	f precision.Format
}

// storedA returns in.A stored in f, from in's cache when it has one.
func (in Inputs) storedA(f precision.Format) (*stored, error) { return in.stored(storeKey{f: f}) }

// storedB returns in.B stored in f, from in's cache when it has one.
func (in Inputs) storedB(f precision.Format) (*stored, error) {
	return in.stored(storeKey{b: true, f: f})
}

func (in Inputs) stored(k storeKey) (*stored, error) {
	xs := in.A
	if k.b {
		xs = in.B
	}
	if in.cache == nil {
		return store(k.f, xs)
	}
	in.cache.mu.Lock()
	defer in.cache.mu.Unlock()
	if s, ok := in.cache.m[k]; ok {
		return s, nil
	}
	s, err := store(k.f, xs)
	if err != nil {
		return nil, err
	}
	if in.cache.m == nil {
		in.cache.m = make(map[storeKey]*stored)
	}
	in.cache.m[k] = s
	return s, nil
}

// store converts xs to format f.
func store(f precision.Format, xs []float32) (*stored, error) {
	s := &stored{f: f, n: len(xs)}
	switch f {
	case precision.BF16:
		s.u16 = make([]uint16, len(xs))
		for i, x := range xs {
			s.u16[i] = precision.EncodeBF16(x)
		}
	case precision.FP16, precision.FP8E4M3:
		s.scales = make([]float32, 0, ceilDiv(len(xs), storeBlock))
		if f == precision.FP16 {
			s.u16 = make([]uint16, len(xs))
		} else {
			s.u8 = make([]uint8, len(xs))
		}
		for lo := 0; lo < len(xs); lo += storeBlock {
			blk := xs[lo:min(lo+storeBlock, len(xs))]
			var amax float64
			for _, x := range blk {
				amax = max(amax, math.Abs(float64(x)))
			}
			if math.IsNaN(amax) || math.IsInf(amax, 0) {
				return nil, fmt.Errorf("store input in %s: a block holds %v", f, amax)
			}
			sc := pow2Scale(amax, f.MaxFinite())
			s.scales = append(s.scales, float32(sc))
			for i, x := range blk {
				v := float32(float64(x) / sc) // exact: sc is a power of two
				if f == precision.FP16 {
					s.u16[lo+i] = precision.EncodeFP16(v)
				} else {
					s.u8[lo+i] = precision.EncodeE4M3(v)
				}
			}
		}
	case precision.INT8, precision.INT4:
		q := make([]int8, len(xs))
		sc, err := precision.Quantize(f, q, xs, storeBlock)
		if err != nil {
			return nil, fmt.Errorf("store input in %s: %w", f, err)
		}
		s.scales = sc
		if f == precision.INT8 {
			s.i8 = q
			break
		}
		s.u8 = make([]uint8, ceilDiv(len(xs), 2))
		for i, v := range q {
			s.u8[i/2] |= uint8(v&0xf) << (4 * (i % 2))
		}
	default:
		return nil, fmt.Errorf("store input in %s: not a storage format", f)
	}
	return s, nil
}

// pow2Scale is the power of two that brings amax into (max/2, max], at
// least float32's smallest normal so it stays a float32; 1 for amax 0.
func pow2Scale(amax, maxFin float64) float64 {
	if amax == 0 {
		return 1
	}
	_, e := math.Frexp(amax / maxFin) // amax/maxFin = fr·2^e, fr in [0.5, 1)
	return math.Ldexp(1, max(e, -126))
}

// scale is the scale of the block holding value i (1 for BF16).
func (s *stored) scale(i int) float32 {
	if s.scales == nil {
		return 1
	}
	return s.scales[i/storeBlock]
}

var (
	fp16Table = sync.OnceValue(func() *[1 << 16]float32 {
		var t [1 << 16]float32
		for i := range t {
			t[i] = precision.DecodeFP16(uint16(i))
		}
		return &t
	})
	e4m3Table = sync.OnceValue(func() *[256]float32 {
		var t [256]float32
		for i := range t {
			t[i] = precision.DecodeE4M3(uint8(i))
		}
		return &t
	})
)

// decode writes the values lo..lo+len(buf)-1 into buf as float32: exact
// for the float formats, fl(q·scale) for the integers. lo is a multiple of
// storeBlock and len(buf) at most storeBlock, so one scale covers buf.
func (s *stored) decode(buf []float32, lo int) {
	sc := s.scale(lo)
	switch s.f {
	case precision.BF16:
		for i, h := range s.u16[lo : lo+len(buf)] {
			buf[i] = math.Float32frombits(uint32(h) << 16)
		}
	case precision.FP16:
		t := fp16Table()
		buf = buf[:len(buf):len(buf)]
		for i, h := range s.u16[lo : lo+len(buf)] {
			// A normal FP16 value is a float32 with the exponent rebiased
			// (127-15 = 112) and 13 more fraction bits; zeros and
			// subnormals (rare once scaled) come from the table.
			var v float32
			if h&0x7c00 != 0 {
				v = math.Float32frombits(uint32(h&0x8000)<<16 | (uint32(h&0x7fff)<<13 + 112<<23))
			} else {
				v = t[h]
			}
			buf[i] = v * sc
		}
	case precision.FP8E4M3:
		t := e4m3Table()
		for i, b := range s.u8[lo : lo+len(buf)] {
			buf[i] = t[b] * sc
		}
	case precision.INT8:
		for i, q := range s.i8[lo : lo+len(buf)] {
			buf[i] = float32(q) * sc
		}
	case precision.INT4:
		// lo is even, so value lo is a low nibble.
		p := s.u8[lo/2:]
		for i := 0; i+1 < len(buf); i += 2 {
			b := p[i/2]
			buf[i] = float32(int8(b<<4)>>4) * sc
			buf[i+1] = float32(int8(b)>>4) * sc
		}
		if len(buf)%2 == 1 {
			buf[len(buf)-1] = float32(int8(p[len(buf)/2]<<4)>>4) * sc
		}
	}
}

// decodeAt writes values lo..lo+len(dst)-1 into dst as decode does, for
// any lo (the range may cross scale blocks): for packing a panel of a
// stored matrix, one row segment at a time.
func (s *stored) decodeAt(dst []float32, lo int) {
	for len(dst) > 0 {
		blk := lo / storeBlock
		cnt := min(len(dst), (blk+1)*storeBlock-lo)
		if s.f == precision.INT4 || lo%storeBlock != 0 {
			s.decodeSlow(dst[:cnt], lo)
		} else {
			s.decode(dst[:cnt], lo)
		}
		dst, lo = dst[cnt:], lo+cnt
	}
}

// decodeSlow is decode for a range inside one scale block that need not
// start at its beginning (nor, for INT4, on a byte).
func (s *stored) decodeSlow(dst []float32, lo int) {
	sc := s.scale(lo)
	for i := range dst {
		x := lo + i
		var v float32
		switch s.f {
		case precision.BF16:
			v = precision.DecodeBF16(s.u16[x])
		case precision.FP16:
			v = fp16Table()[s.u16[x]] * sc
		case precision.FP8E4M3:
			v = e4m3Table()[s.u8[x]] * sc
		case precision.INT8:
			v = float32(s.i8[x]) * sc
		case precision.INT4:
			b := s.u8[x/2]
			if x%2 == 0 {
				b <<= 4
			}
			v = float32(int8(b)>>4) * sc
		}
		dst[i] = v
	}
}

// errors bounds the storage error: |x̂_i - x_i| <= rel·|x_i| + abs_i
// (precision.Format.Store at the value's scale), and returns rel, Σabs_i
// and max abs_i. A float format's absolute part counts only for a value
// that falls below its normal range at its scale (a normal one has only
// the relative error, a zero is stored exactly); an integer format's for
// every nonzero value. A decoded value times its scale that lands among
// float32's subnormals (below 2^-126) may round once more: 2^-149.
func (s *stored) errors(xs []float32) (rel, abs, maxAbs float64) {
	rel = s.f.Store(1).Rel
	var normMin float64
	if s.f.IsFloat() {
		normMin = s.f.SmallestNormal()
	}
	for i, x := range xs {
		if x == 0 {
			continue
		}
		a := math.Abs(float64(x))
		sc := float64(s.scale(i))
		var e float64
		if a < 0x1p-126 {
			e = 0x1p-149
		}
		if !s.f.IsFloat() || a/sc < normMin {
			e += s.f.Store(sc).Abs
		}
		abs += e
		maxAbs = max(maxAbs, e)
	}
	return rel, abs, maxAbs
}

// bytes is the memory the stored values and scales take.
func (s *stored) bytes() int {
	return 2*len(s.u16) + len(s.u8) + len(s.i8) + 4*len(s.scales)
}
