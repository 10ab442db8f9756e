package opencl

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/quasim/quasim/genome"
)

// put stores x as element i of b in type t, little-endian (the host
// order of the devices quasim runs on: x86-64 and arm64).
func put(b []byte, t Type, i int, x float64) {
	o := i * t.Size
	switch {
	case t.Float && t.Size == 4:
		binary.LittleEndian.PutUint32(b[o:], math.Float32bits(float32(x)))
	case t.Float:
		binary.LittleEndian.PutUint64(b[o:], math.Float64bits(x))
	default:
		v := uint64(int64(x))
		if !t.Sign && x >= 1<<63 {
			v = uint64(x)
		}
		for j := range t.Size {
			b[o+j] = byte(v >> (8 * j))
		}
	}
}

// get reads element i of b in type t.
func get(b []byte, t Type, i int) float64 {
	o := i * t.Size
	switch {
	case t.Float && t.Size == 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[o:])))
	case t.Float:
		return math.Float64frombits(binary.LittleEndian.Uint64(b[o:]))
	}
	var v uint64
	for j := range t.Size {
		v |= uint64(b[o+j]) << (8 * j)
	}
	if t.Sign {
		shift := 64 - 8*t.Size
		return float64(int64(v<<shift) >> shift)
	}
	return float64(v)
}

// fill returns n elements of type t filled as f says.
func fill(f Fill, t Type, n int) []byte {
	b := make([]byte, n*t.Size)
	switch f.Kind {
	case "", FillZero:
	case FillConstant:
		for i := range n {
			put(b, t, i, f.Value)
		}
	case FillRamp:
		for i := range n {
			put(b, t, i, f.Start+float64(i)*f.Step)
		}
	case FillRandom, FillUniform, FillNormal:
		lo, scale := 0.0, f.Value
		if f.Kind == FillUniform {
			lo, scale = f.Start, f.Step-f.Start
		} else if scale == 0 {
			scale = 1
		}
		r := rand.New(rand.NewPCG(f.Seed, 0x9e3779b97f4a7c15))
		for i := range n {
			x := lo + r.Float64()*scale
			if f.Kind == FillNormal {
				x = f.Start + r.NormFloat64()*f.Step
			}
			if !t.Float {
				x = math.Floor(x)
			}
			put(b, t, i, x)
		}
	}
	return b
}

// scalar encodes v as one element of type t.
func scalar(v genome.Value, t Type) ([]byte, error) {
	x, ok := v.Float64()
	if !ok {
		return nil, fmt.Errorf("%s is not a number", v.String())
	}
	if !t.Float && x != math.Trunc(x) {
		return nil, fmt.Errorf("%s is not an integer", v.String())
	}
	b := make([]byte, t.Size)
	put(b, t, 0, x)
	return b, nil
}

// Mismatch is where an output differs from its reference.
type Mismatch struct {
	Arg   string
	Index int
	Got   float64
	Want  float64
	Bad   int // elements outside the tolerance
	Total int
}

func (m *Mismatch) String() string {
	if m.Index < 0 {
		return fmt.Sprintf("output %s sums to %s, the reference to %s", m.Arg, genome.PyFloat(m.Got), genome.PyFloat(m.Want))
	}
	return fmt.Sprintf("output %s differs from the reference at %d of %d elements; first at [%d]: got %s, want %s",
		m.Arg, m.Bad, m.Total, m.Index, genome.PyFloat(m.Got), genome.PyFloat(m.Want))
}

// compare checks got against want (both n elements of type t) under the
// tolerance of c, returning nil when every element passes.
func compare(name string, got, want []byte, t Type, c Check) *Mismatch {
	n := len(want) / t.Size
	if c.Sum {
		var g, w, mag float64
		for i := range n {
			g += get(got, t, i)
			w += get(want, t, i)
			mag += math.Abs(get(want, t, i))
		}
		d := math.Abs(g - w)
		if g == w || (!math.IsNaN(d) && (d <= c.Abs || (c.Rel > 0 && d <= c.Rel*max(math.Abs(w), mag)))) {
			return nil
		}
		return &Mismatch{Arg: name, Index: -1, Got: g, Want: w, Bad: 1, Total: 1}
	}
	var meanAbs float64
	if c.Rel > 0 && !c.AllClose {
		for i := range n {
			meanAbs += math.Abs(get(want, t, i))
		}
		meanAbs /= float64(max(n, 1))
	}
	var m *Mismatch
	for i := range n {
		g, w := get(got, t, i), get(want, t, i)
		if g == w {
			continue
		}
		d := math.Abs(g - w)
		ok := d <= c.Abs || (c.Rel > 0 && d <= c.Rel*max(math.Abs(w), meanAbs))
		if c.AllClose {
			ok = d <= c.Abs+c.Rel*math.Abs(w)
		}
		if ok && !math.IsNaN(d) {
			continue
		}
		if m == nil {
			m = &Mismatch{Arg: name, Index: i, Got: g, Want: w, Total: n}
		}
		m.Bad++
	}
	return m
}

// checksum sums the elements of b, for a verify run's answer.
func checksum(b []byte, t Type) float64 {
	var s float64
	for i := range len(b) / t.Size {
		s += get(b, t, i)
	}
	return s
}

// errStats is how far got is from want (both n elements of type t) under
// the tolerance of c: the largest absolute and relative errors, the
// element where the error is largest against what the tolerance allows,
// and how many elements are outside it. With c.Sum the one element
// compared is the sum.
type errStats struct {
	maxAbs, maxRel float64
	worst          int // -1 for the sum
	worstGot       float64
	worstWant      float64
	worstRatio     float64 // error over what the tolerance allows there (+Inf for exact)
	bad, total     int
}

func measureErr(got, want []byte, t Type, c Check) errStats {
	n := len(want) / t.Size
	st := errStats{worst: -2}
	note := func(i int, g, w, scale float64) {
		d := math.Abs(g - w)
		if math.IsNaN(d) {
			d = math.Inf(1)
		}
		st.total++
		st.maxAbs = max(st.maxAbs, d)
		rel := d / max(scale, math.SmallestNonzeroFloat32)
		st.maxRel = max(st.maxRel, rel)
		allowed := max(c.Abs, c.Rel*scale)
		if c.AllClose {
			allowed = c.Abs + c.Rel*math.Abs(w)
		}
		ratio := 0.0
		switch {
		case d == 0:
		case allowed > 0:
			ratio = d / allowed
		default:
			ratio = math.Inf(1)
		}
		if d > allowed || math.IsInf(d, 1) {
			st.bad++
		}
		if st.worst == -2 || ratio > st.worstRatio {
			st.worst, st.worstGot, st.worstWant, st.worstRatio = i, g, w, ratio
		}
	}
	if c.Sum {
		var g, w, mag float64
		for i := range n {
			g += get(got, t, i)
			w += get(want, t, i)
			mag += math.Abs(get(want, t, i))
		}
		note(-1, g, w, max(math.Abs(w), mag))
		return st
	}
	var meanAbs float64
	for i := range n {
		meanAbs += math.Abs(get(want, t, i))
	}
	meanAbs /= float64(max(n, 1))
	for i := range n {
		w := get(want, t, i)
		note(i, get(got, t, i), w, max(math.Abs(w), meanAbs))
	}
	return st
}

// toleranceKind names the tolerance of c as a certificate records it.
func toleranceKind(c Check) string {
	k := "exact"
	switch {
	case c.AllClose:
		k = "allclose" // |got - want| <= abs + rel·|want|, numpy.allclose's rule
	case c.Abs > 0 && c.Rel > 0:
		k = "abs_or_rel"
	case c.Abs > 0:
		k = "abs"
	case c.Rel > 0:
		k = "rel"
	}
	if c.Sum {
		k = "sum of " + k
	}
	return k
}

// readData reads a buffer's initial content from a .npy file of n
// elements of type typ. The bytes are read-only (mapFile): they are only
// written to buffers and compared.
func readData(path, typ string, n int64) ([]byte, error) {
	a, err := loadNPY(path, mapFile)
	if err != nil {
		return nil, err
	}
	if Types[a.Type] != Types[typ] {
		return nil, fmt.Errorf("%s holds %s elements, the argument is %s", path, a.Type, typ)
	}
	if int64(a.Len) != n {
		return nil, fmt.Errorf("%s holds %d elements, the argument's size is %d", path, a.Len, n)
	}
	return a.Bytes, nil
}
