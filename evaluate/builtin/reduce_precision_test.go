package builtin

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	goruntime "runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// TestChunkedMatchesFastPath runs the chunked path on FP32 inputs with
// the FP32 path's accumulators: it adds in the same order, so the sums
// are bitwise equal.
func TestChunkedMatchesFastPath(t *testing.T) {
	t.Parallel()
	for _, n := range []int{5, 1000, 100_003} {
		k := mustNew(t, "reduce", Options{})
		p := problem(n)
		s, err := k.Space(p)
		if err != nil {
			t.Fatal(err)
		}
		in := k.NewInputs(p, 3)
		for _, c := range s.All() {
			m := s.Map(c)
			if m["input"].S != "fp32" || m["acc"].S == accFP16 || m["acc"].S == accBF16 {
				continue
			}
			fast := make([]float32, 1)
			prepareReduce(m, p.Dims)(in, fast)
			chunked := make([]float32, 1)
			chunkedReduce(newReduceConfig(m), n)(in, chunked)
			if math.Float32bits(fast[0]) != math.Float32bits(chunked[0]) {
				t.Fatalf("n %d %s: chunked %v, fast path %v", n, s.Key(c), chunked[0], fast[0])
			}
		}
	}
}

// TestRoundFP16 checks the fast FP16 rounding against precision's on
// values around every FP16 binade, its edges and ties.
func TestRoundFP16(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 0))
	check := func(x float32) {
		g, w := roundFP16(x), precision.FP16.Round(x)
		if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
			t.Fatalf("roundFP16(%v) = %v, want %v", x, g, w)
		}
	}
	for _, x := range []float32{0, 65504, 65519.99, 65520, 65536, 1e9, 0x1p-14, 0x1p-15, 0x1p-25, float32(math.Inf(1)), float32(math.NaN())} {
		check(x)
		check(-x)
	}
	for e := -30; e <= 17; e++ {
		for range 20000 {
			x := float32(math.Ldexp(1+rng.Float64(), e))
			check(x)
			check(-x)
			// A tie: the 11th significant bit and none after it.
			b := math.Float32bits(x)&^0x1fff | 0x1000
			check(math.Float32frombits(b))
		}
	}
}

// TestStoredDecode checks that a stored input reads back as precision's
// conversions give it: each float value rounded at its block's scale, the
// integers as Quantize and Dequantize give them.
func TestStoredDecode(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 0))
	xs := make([]float32, 3*storeBlock+77)
	for i := range xs {
		// Blocks of very different magnitudes, and a zero block.
		xs[i] = float32((2*rng.Float64() - 1) * math.Ldexp(1, 20*(i/storeBlock)-30))
	}
	clear(xs[storeBlock : 2*storeBlock])
	for _, f := range []precision.Format{precision.FP16, precision.BF16, precision.FP8E4M3, precision.INT8, precision.INT4} {
		st, err := store(f, xs)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float32, len(xs))
		for lo := 0; lo < len(xs); lo += storeBlock {
			st.decode(got[lo:min(lo+storeBlock, len(xs))], lo)
		}
		want := make([]float32, len(xs))
		if f.IsFloat() {
			for i, x := range xs {
				sc := float64(st.scale(i))
				want[i] = float32(float64(f.Round(float32(float64(x)/sc))) * sc)
			}
		} else {
			copy(want, xs)
			if err := precision.RoundSlice(f, want, storeBlock); err != nil {
				t.Fatal(err)
			}
		}
		// Any range, at any offset, decodes to the same values.
		for range 200 {
			lo := rng.IntN(len(xs))
			hi := lo + rng.IntN(len(xs)-lo+1)
			part := make([]float32, hi-lo)
			st.decodeAt(part, lo)
			for i, v := range part {
				if math.Float32bits(v) != math.Float32bits(got[lo+i]) {
					t.Fatalf("%s decodeAt(%d..%d)[%d] = %v, want %v", f, lo, hi, i, v, got[lo+i])
				}
			}
		}
		rel, abs, _ := st.errors(xs)
		var errSum float64
		for i := range xs {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s value %d (%g): decoded %g, want %g", f, i, xs[i], got[i], want[i])
			}
			e := math.Abs(float64(got[i]) - float64(xs[i]))
			errSum += e - rel*math.Abs(float64(xs[i]))
		}
		if errSum > abs {
			t.Errorf("%s: storage errors beyond rel sum to %g > bound %g", f, errSum, abs)
		}
	}
}

// TestReducedInputBytes checks that the reduced formats really hold
// fewer bytes: FP16 and BF16 two per value, FP8 and INT8 one, INT4 half.
func TestReducedInputBytes(t *testing.T) {
	t.Parallel()
	xs := make([]float32, 1<<12)
	for i := range xs {
		xs[i] = float32(i%100) - 50
	}
	for f, per := range map[precision.Format]float64{precision.FP16: 2, precision.BF16: 2, precision.FP8E4M3: 1, precision.INT8: 1, precision.INT4: 0.5} {
		st, err := store(f, xs)
		if err != nil {
			t.Fatal(err)
		}
		data := float64(st.bytes() - 4*len(st.scales))
		if data != per*float64(len(xs)) {
			t.Errorf("%s: %v data bytes for %d values, want %v per value", f, data, len(xs), per)
		}
	}
}

// BenchmarkReduceStorage times reduce with its input stored in each
// format: at n = 2^22 (16 MiB in fp32, inside this VM's 32 MiB L3) for the
// FP32 default config (256,1,1,float32), a fast one (65536,8,1,float32)
// and its float64 twin; at n = 2^25 (128 MiB: from memory) for the fast
// one. The stored input is made before the timer starts, as a kernel
// reads data its producer wrote in that format; store/ times that one-off
// conversion at 2^22. MB/s counts the stored bytes.
//
//	go test ./evaluate/builtin -run '^$' -bench ReduceStorage -benchtime 20x -count 3
func BenchmarkReduceStorage(b *testing.B) {
	k := mustNew(b, "reduce", Options{})
	formats := []precision.Format{precision.FP32, precision.FP16, precision.BF16, precision.INT8, precision.FP8E4M3, precision.INT4}
	for _, size := range []struct {
		n     int
		bases []string
	}{
		{1 << 22, []string{"256,1,1,float32", "65536,8,1,float32", "65536,8,1,float64"}},
		{1 << 25, []string{"65536,8,1,float32"}},
	} {
		p := problem(size.n)
		s, err := k.Space(p)
		if err != nil {
			b.Fatal(err)
		}
		in := k.NewInputs(p, 1)
		out := make([]float32, 1)
		for _, base := range size.bases {
			for _, f := range formats {
				c := parseKey(b, s, base+","+f.String())
				run := k.def.prepare(s.Map(c), p.Dims)
				run(in, out) // stores the input in f, once
				b.Run(fmt.Sprintf("n=%d/%s/%s", size.n, base, f), func(b *testing.B) {
					b.SetBytes(int64(len(in.A)) * int64(f.Bits()) / 8)
					// workers 1 runs on this goroutine: its thread's CPU
					// time is the run's, and unlike wall time it does not
					// count the time other processes hold the core.
					goruntime.LockOSThread()
					defer goruntime.UnlockOSThread()
					var cpu time.Duration
					for b.Loop() {
						t0 := threadCPU()
						run(in, out)
						cpu += threadCPU() - t0
					}
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				})
			}
		}
		if size.n != 1<<22 {
			continue
		}
		for _, f := range formats[1:] {
			b.Run("store/"+f.String(), func(b *testing.B) {
				for b.Loop() {
					if _, err := store(f, in.A); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// threadCPU is the CPU time of the calling thread.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// TestReducedInputSumsDecodedValues runs every config with a reduced
// input and an FP32-path accumulator, and the FP32 path on the decoded
// values: the same values added in the same order, so the sums are
// bitwise equal (whether decoded into a buffer or fused into the sum).
func TestReducedInputSumsDecodedValues(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping under -short (CI's race pass): single-goroutine numerics, run in full without -short")
	}
	t.Parallel()
	for _, n := range []int{5, 777, 100_003} {
		k := mustNew(t, "reduce", Options{})
		p := problem(n)
		s, err := k.Space(p)
		if err != nil {
			t.Fatal(err)
		}
		in := k.NewInputs(p, 8)
		decoded := map[string][]float32{}
		for _, c := range s.All() {
			m := s.Map(c)
			f, acc := m["input"].S, m["acc"].S
			if f == "fp32" || acc == accFP16 || acc == accBF16 {
				continue
			}
			if decoded[f] == nil {
				fm, _ := precision.ParseFormat(f)
				st, err := store(fm, in.A)
				if err != nil {
					t.Fatal(err)
				}
				d := make([]float32, n)
				for lo := 0; lo < n; lo += storeBlock {
					st.decode(d[lo:min(lo+storeBlock, n)], lo)
				}
				decoded[f] = d
			}
			got := make([]float32, 1)
			prepareReduce(m, p.Dims)(in, got)
			m32 := maps.Clone(m)
			m32["input"] = genome.Str("fp32")
			want := make([]float32, 1)
			prepareReduce(m32, p.Dims)(Inputs{A: decoded[f]}, want)
			if math.Float32bits(got[0]) != math.Float32bits(want[0]) {
				t.Fatalf("n %d %s: %v, FP32 path on the decoded values %v", n, s.Key(c), got[0], want[0])
			}
		}
	}
}

// storedSumsDecoded runs a sample of kernel's configs whose precision
// parameter param stores one input (B when inB, else A) in a reduced
// format, and the same configs with that input in FP32 holding the decoded
// values: the kernel decodes what it stores, so the outputs must be
// bitwise equal.
func storedSumsDecoded(t *testing.T, kernel string, dims []int, param string, inB bool) {
	t.Helper()
	k := mustNew(t, kernel, Options{})
	p := problem(dims...)
	s, err := k.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	in := k.NewInputs(p, 5)
	_, _, nout := k.def.sizes(p.Dims)
	decoded := map[string]Inputs{}
	tried := 0
	for _, c := range sampleConfigs(s, 3000, 4) {
		m := s.Map(c)
		f := m[param].S
		if f == "fp32" {
			continue
		}
		if _, ok := decoded[f]; !ok {
			fm, _ := precision.ParseFormat(f)
			src := in.A
			if inB {
				src = in.B
			}
			st, err := store(fm, src)
			if err != nil {
				t.Fatal(err)
			}
			d := make([]float32, len(src))
			st.decodeAt(d, 0)
			if inB {
				decoded[f] = Inputs{A: in.A, B: d}
			} else {
				decoded[f] = Inputs{A: d, B: in.B}
			}
		}
		got := make([]float32, nout)
		k.def.prepare(m, p.Dims)(in, got)
		m32 := maps.Clone(m)
		m32[param] = genome.Str("fp32")
		want := make([]float32, nout)
		k.def.prepare(m32, p.Dims)(decoded[f], want)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s [%d]: %v, FP32 input holding the decoded values %v", s.Key(c), i, got[i], want[i])
			}
		}
		tried++
	}
	if tried < 100 {
		t.Errorf("only %d configs with a reduced %s", tried, param)
	}
}

// TestSgemmStoredBSumsDecodedValues: packing decodes B's panels. n = 45
// puts B's rows at odd offsets (INT4 nibbles) and across scale blocks.
func TestSgemmStoredBSumsDecodedValues(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping under -short (CI's race pass): single-goroutine numerics, run in full without -short")
	}
	t.Parallel()
	storedSumsDecoded(t, "sgemm", []int{37, 45, 41}, "b_input", true)
}

// TestConv2dStoredInputSumsDecodedValues: the local buffer decodes each
// tile of the image. w = 45 puts the tiles' rows at odd offsets and across
// scale blocks.
func TestConv2dStoredInputSumsDecodedValues(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping under -short (CI's race pass): single-goroutine numerics, run in full without -short")
	}
	t.Parallel()
	storedSumsDecoded(t, "conv2d", []int{39, 45, 5}, "input", false)
}

// BenchmarkSgemmStorage times sgemm at 256x256x256 and 512x512x512 with
// its B stored in each format (packed panels decoded from it), for the
// fastest config of BenchmarkSpread (16,128,16,8,1,True,ikj) and the same
// with jik order (B panels transposed); thread CPU time per run.
//
//	go test ./evaluate/builtin -run '^$' -bench SgemmStorage -benchtime 10x -count 2
func BenchmarkSgemmStorage(b *testing.B) {
	k := mustNew(b, "sgemm", Options{})
	for _, d := range []int{256, 512} {
		p := problem(d, d, d)
		s, err := k.Space(p)
		if err != nil {
			b.Fatal(err)
		}
		in := k.NewInputs(p, 1)
		out := make([]float32, d*d)
		for _, base := range []string{"16,128,16,8,1,True,ikj", "16,128,16,8,1,True,jik"} {
			for _, f := range []precision.Format{precision.FP32, precision.FP16, precision.BF16, precision.INT8, precision.FP8E4M3, precision.INT4} {
				c := parseKey(b, s, base+","+f.String())
				run := k.def.prepare(s.Map(c), p.Dims)
				run(in, out) // stores B in f, once
				b.Run(fmt.Sprintf("%d/%s/%s", d, base, f), func(b *testing.B) {
					goruntime.LockOSThread()
					defer goruntime.UnlockOSThread()
					var cpu time.Duration
					for b.Loop() {
						t0 := threadCPU()
						run(in, out)
						cpu += threadCPU() - t0
					}
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}
