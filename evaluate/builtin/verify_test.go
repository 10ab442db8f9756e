package builtin

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

// fastVerify is VerifySettings with few latency samples, for tests.
var fastVerify = evaluate.VerifySettings{}

func parseKey(t testing.TB, s *genome.Space, key string) genome.Config {
	t.Helper()
	c, err := s.ParseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(c); err != nil {
		t.Fatal(err)
	}
	return c
}

func mustVerify(t testing.TB, k *Kernel, c genome.Config, p evaluate.Problem, s evaluate.VerifySettings) evaluate.VerifyReport {
	t.Helper()
	rep, err := k.Verify(context.Background(), c, p, s)
	if err != nil {
		t.Fatalf("Verify(%v, %v) = %v", c, p.Dims, err)
	}
	return rep
}

// positive makes the default inputs' magnitudes: uniform in [0, 1).
func positive(k *Kernel) inputGen {
	return func(d []int, seed uint64) Inputs { return absInputs(k.def.newInputs(d, seed)) }
}

// fullPrecision keeps up to n of configs that store their inputs in FP32
// and accumulate in FP32 or better (every config of sgemm and conv2d):
// the ones that pass the default tolerance, rel 1e-4, on every input.
func fullPrecision(s *genome.Space, configs []genome.Config, n int) []genome.Config {
	var out []genome.Config
	for _, c := range configs {
		m := s.Map(c)
		if in, ok := m["input"]; ok && in.S != "fp32" {
			continue
		}
		if in, ok := m["b_input"]; ok && in.S != "fp32" {
			continue
		}
		if acc, ok := m["acc"]; ok && (acc.S == accFP16 || acc.S == accBF16) {
			continue
		}
		if len(out) < n {
			out = append(out, c)
		}
	}
	return out
}

// TestVerifyPasses verifies a sample of configs of every kernel on problems
// that no tile divides: each passes every check, with every case run.
func TestVerifyPasses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kernel string
		dims   []int
	}{
		{"sgemm", []int{37, 45, 41}},
		{"sgemm", []int{100, 72, 64}},
		{"conv2d", []int{37, 41, 5}},
		{"reduce", []int{100_003}},
	}
	for _, tt := range tests {
		t.Run(tt.kernel+"/"+problem(tt.dims...).String(), func(t *testing.T) {
			t.Parallel()
			k := mustNew(t, tt.kernel, Options{})
			p := problem(tt.dims...)
			s, err := k.Space(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range fullPrecision(s, sampleConfigs(s, 40, 3), 8) {
				rep := mustVerify(t, k, c, p, fastVerify)
				key := s.Key(c)
				if !rep.Passed() {
					t.Errorf("Verify(%s) failed: %+v", key, rep)
					continue
				}
				par, det, eb := rep.Parity, rep.Determinism, rep.ErrorBound
				wantCases := []string{"seed=1", "seed=2", "seed=3", "zeros", "large", "ragged "}
				if len(par.Cases) != len(wantCases) {
					t.Errorf("Verify(%s).Parity.Cases = %q, want %d cases", key, par.Cases, len(wantCases))
				} else {
					for i, w := range wantCases {
						if !strings.HasPrefix(par.Cases[i], w) {
							t.Errorf("Verify(%s).Parity.Cases[%d] = %q, want prefix %q", key, i, par.Cases[i], w)
						}
					}
				}
				if par.Tolerance != "rel" || par.Value != 1e-4 || par.Worst == "" || !(par.MaxRelErr <= 1e-4) {
					t.Errorf("Verify(%s).Parity = %+v, want rel 1e-4 with a worst element", key, par)
				}
				if det.Runs != 3 || !det.Identical || det.MaxSpread != 0 || det.Policy != "reject" {
					t.Errorf("Verify(%s).Determinism = %+v, want 3 identical runs", key, det)
				}
				hasFormula := strings.Contains(eb.Formula, "gamma") || strings.Contains(eb.Formula, "E =")
				if !(eb.Ratio > 0 && eb.Ratio <= 1) || eb.Measured > eb.Bound || !hasFormula {
					t.Errorf("Verify(%s).ErrorBound = %+v, want a ratio in (0, 1] and a formula", key, eb)
				}
				if rep.CostS <= 0 {
					t.Errorf("Verify(%s).CostS = %v", key, rep.CostS)
				}
			}
		})
	}
}

// TestErrorBoundsHold runs every config (or a seeded sample) on small
// problems, on signed and on positive inputs, and checks each output element
// against its config's a-priori bound; on the positive inputs the float32
// error bound is also not vacuous (the error is a visible fraction of it for
// some config).
func TestErrorBoundsHold(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kernel string
		dims   []int
		sample int // 0: every config
		short  int // sample under -short (the race pass, where a config costs 10x): 0, sample's
	}{
		{"sgemm", []int{37, 45, 41}, 0, 40},
		{"sgemm", []int{1, 1, 1}, 0, 0},
		{"sgemm", []int{97, 133, 139}, 60, 20},
		{"conv2d", []int{37, 41, 5}, 0, 40},
		{"conv2d", []int{3, 3, 3}, 0, 0},
		{"reduce", []int{100_003}, 0, 40},
		{"reduce", []int{5}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.kernel+"/"+problem(tt.dims...).String(), func(t *testing.T) {
			t.Parallel()
			k := mustNew(t, tt.kernel, Options{})
			p := problem(tt.dims...)
			s, err := k.Space(p)
			if err != nil {
				t.Fatal(err)
			}
			configs := s.All()
			if n := tt.sample; n > 0 || (testing.Short() && tt.short > 0) {
				if testing.Short() && tt.short > 0 {
					n = tt.short
				}
				configs = sampleConfigs(s, n, 2)
			}
			signed := k.NewInputs(p, 4)
			for _, in := range []Inputs{signed, absInputs(signed)} {
				ref, abs := k.def.verify.refAbs(p.Dims, in)
				for _, c := range configs {
					out, err := k.Run(c, p, in)
					if err != nil {
						t.Fatalf("Run(%s) = %v", s.Key(c), err)
					}
					m := k.def.verify.bound(s.Map(c), p.Dims, in)
					for i := range out {
						e := math.Abs(float64(out[i]) - ref[i])
						if b := m.bound(ref[i], abs[i]); !(e <= b) {
							t.Fatalf("Run(%s)[%d] = %v, want %v within the bound %g (%s)", s.Key(c), i, out[i], ref[i], b, m.formula)
						}
					}
				}
			}
		})
	}
}

// TestErrorBoundFormulas pins the accumulation depth of a few configs.
func TestErrorBoundFormulas(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kernel string
		dims   []int
		key    string
		want   string // in the formula
	}{
		// floor(16/1) products, 32 k-blocks: 1 + 15 + 0 + 0 + 31.
		{"sgemm", []int{512, 512, 512}, "16,16,16,1,1,False,ijk,fp32", "d = 47,"},
		// 8 partial sums per block of 64: 1 + 7 + 7 + 3 + 7.
		{"sgemm", []int{512, 512, 512}, "16,16,64,8,1,True,jik,fp32", "d = 25,"},
		// ikj: 512/8 = 64 additions into C, tree of depth 3: 1 + 3 + 63.
		{"sgemm", []int{512, 512, 512}, "16,128,16,8,1,True,ikj,fp32", "d = 67,"},
		// unroll 1 ikj is the sequential sum: d = k.
		{"sgemm", []int{64, 64, 100}, "16,16,16,1,1,False,ikj,fp32", "d = 100,"},
		{"conv2d", []int{64, 64, 5}, "8,1,1,False,1,fp32", "d = f*f = 25,"},
		// (8192-1) + 7 + 3 + 255.
		{"reduce", []int{1 << 24}, "65536,8,1,float32,fp32", "d = 8456,"},
		{"reduce", []int{1 << 24}, "65536,8,1,kahan,fp32", "= 15.00u"},
		{"reduce", []int{1 << 24}, "65536,8,1,float64,fp32", "= 8456)"},
	}
	for _, tt := range tests {
		k := mustNew(t, tt.kernel, Options{})
		p := problem(tt.dims...)
		s, err := k.Space(p)
		if err != nil {
			t.Fatal(err)
		}
		c := parseKey(t, s, tt.key)
		if f := k.def.verify.bound(s.Map(c), tt.dims, Inputs{}).formula; !strings.Contains(f, tt.want) {
			t.Errorf("%s %s bound formula = %q, want it to contain %q", tt.kernel, tt.key, f, tt.want)
		}
	}
}

func TestGamma(t *testing.T) {
	t.Parallel()
	tests := []struct {
		k    int
		u    float64
		want float64
	}{
		{0, u32, 0},
		{1, u32, u32 / (1 - u32)},
		{1 << 23, u32, 1},
		{1 << 24, u32, math.Inf(1)},
		{1 << 30, u32, math.Inf(1)},
	}
	for _, tt := range tests {
		if got := gamma(tt.k, tt.u); got != tt.want {
			t.Errorf("gamma(%d, %g) = %v, want %v", tt.k, tt.u, got, tt.want)
		}
	}
}

// TestReduceTightTolerance is the precision side of the accumulator choice
// under verification: at n = 2^24 positive values and a relative tolerance
// of 1e-7, a float32 accumulator fails parity while float64 and kahan pass.
func TestReduceTightTolerance(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("skipping: 2^24-element vectors, slow with -short or -race")
	}
	t.Parallel()
	k := mustNew(t, "reduce", Options{})
	p := problem(1 << 24)
	s, err := k.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	// Default seeds: float32's error at this config is 0.3e-7 to 4e-7 of the
	// sum, depending on the inputs, so it fails on some of the five cases.
	set := evaluate.VerifySettings{Tolerance: "rel", Value: 1e-7, Repeats: 2}
	tests := []struct {
		acc  string
		pass bool
	}{
		{"float32", false},
		{"float64", true},
		{"kahan", true},
	}
	for _, tt := range tests {
		c := parseKey(t, s, "65536,8,1,"+tt.acc+",fp32")
		rep, err := k.verify(context.Background(), c, p, set, positive(k))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Parity.Passed != tt.pass || !rep.ErrorBound.Passed || !rep.Determinism.Passed {
			t.Errorf("verify(acc %s, rel 1e-7) parity passed = %v (max rel err %.3g, worst %s), error bound %+v; want parity %v and the bound held",
				tt.acc, rep.Parity.Passed, rep.Parity.MaxRelErr, rep.Parity.Worst, rep.ErrorBound, tt.pass)
		}
	}
}

func TestWrongVariantSpace(t *testing.T) {
	t.Parallel()
	p := problem(100, 72, 64)
	values := func(k *Kernel) ([]string, int) {
		s, err := k.Space(p)
		if err != nil {
			t.Fatal(err)
		}
		i, _ := s.Param("loop_order")
		var out []string
		for _, v := range s.Params()[i].Values {
			out = append(out, v.S)
		}
		return out, s.Params()[i].Default
	}
	tests := []struct {
		opt  Options
		want []string
	}{
		{Options{}, []string{"ijk", "ikj", "jik"}},
		{Options{TestWrongVariant: true}, []string{"ijk", "ikj", "jik", "ikj_fast"}},
	}
	for _, tt := range tests {
		got, def := values(mustNew(t, "sgemm", tt.opt))
		if !slices.Equal(got, tt.want) || def != 0 {
			t.Errorf("sgemm %+v loop_order = %v default %d, want %v default 0", tt.opt, got, def, tt.want)
		}
	}
	// The production spaces are unchanged, and the other kernels ignore it.
	for _, name := range Kernels() {
		a, b := mustNew(t, name, Options{}), mustNew(t, name, Options{TestWrongVariant: true})
		pa := a.DefaultProblems()[0]
		sa, _ := a.Space(pa)
		sb, _ := b.Space(pa)
		if name != "sgemm" && sa.Size() != sb.Size() {
			t.Errorf("%s with TestWrongVariant: %d configs, want %d", name, sb.Size(), sa.Size())
		}
	}
	s, err := mustNew(t, "sgemm", Options{}).Space(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ParseKey("64,16,16,4,1,False,ikj_fast,fp32"); err == nil {
		t.Errorf("production sgemm space accepts ikj_fast")
	}
}

// TestVerifyWrongVariant: ikj_fast drops the rows past the last full tile_m
// block. Where tile_m does not divide m, verification rejects it on every
// case, while ikj passes; where it does, only the ragged case catches it.
// It is faster, which is what makes it tempting.
func TestVerifyWrongVariant(t *testing.T) {
	t.Parallel()
	k := mustNew(t, "sgemm", Options{TestWrongVariant: true, Reps: evaluate.Reps{Min: 5, Max: 5}})
	tests := []struct {
		dims      []int
		key       string
		pass      bool
		worstCase string // prefix of Parity.Worst for a failure
	}{
		{[]int{100, 128, 128}, "64,16,16,4,1,False,ikj_fast,fp32", false, "seed="},
		{[]int{100, 128, 128}, "64,16,16,4,1,False,ikj,fp32", true, ""},
		{[]int{128, 64, 64}, "64,16,16,4,1,False,ikj_fast,fp32", false, "ragged 67x37x37"},
		{[]int{128, 64, 64}, "64,16,16,4,1,False,ikj,fp32", true, ""},
	}
	for _, tt := range tests {
		p := problem(tt.dims...)
		s, err := k.Space(p)
		if err != nil {
			t.Fatal(err)
		}
		c := parseKey(t, s, tt.key)
		rep := mustVerify(t, k, c, p, fastVerify)
		if rep.Passed() != tt.pass || rep.Parity.Passed != tt.pass {
			t.Errorf("Verify(%s at %v).Passed() = %v, parity %+v; want %v", tt.key, tt.dims, rep.Passed(), rep.Parity, tt.pass)
		}
		if !tt.pass {
			if !strings.HasPrefix(rep.Parity.Worst, tt.worstCase) || !strings.Contains(rep.Parity.Worst, "got 0,") {
				t.Errorf("Verify(%s at %v).Parity.Worst = %q, want a dropped (zero) element of case %q", tt.key, tt.dims, rep.Parity.Worst, tt.worstCase)
			}
		}
	}

	// Faster: the 36 dropped rows of 100 are 36% less work. Timings are
	// noisy, so one of three tries must show it.
	p := problem(100, 128, 128)
	s, _ := k.Space(p)
	fast, good := parseKey(t, s, "64,16,16,4,1,False,ikj_fast,fp32"), parseKey(t, s, "64,16,16,4,1,False,ikj,fp32")
	var times []float64
	for range 3 {
		tf, err := k.Evaluate(context.Background(), fast, p)
		if err != nil {
			t.Fatal(err)
		}
		tg, err := k.Evaluate(context.Background(), good, p)
		if err != nil {
			t.Fatal(err)
		}
		if tf.Time < tg.Time {
			return
		}
		times = append(times, tf.Time, tg.Time)
	}
	t.Errorf("ikj_fast was never faster than ikj: (fast, ikj) ms = %v", times)
}

// testDef is a one-dim kernel, the sum of n values, whose run is fn (given
// the count of runs so far, this one included). It has reduce's reference
// and edge cases, and the error bound of a float64 sum rounded once to
// float32.
func testDef(cons []string, fn func(run int, in Inputs, out []float32)) def {
	kd := reduceDef()
	kd.name = "test"
	kd.params = []genome.Param{intParam("x", 0, 1, 2)}
	kd.cons = cons
	kd.verify.bound = func(_ map[string]genome.Value, d []int, in Inputs) errorModel {
		return boundReduce(map[string]genome.Value{"block": genome.Int(int64(d[0])), "unroll": genome.Int(1), "acc": genome.Str("float64"), "input": genome.Str("fp32")}, d, in)
	}
	runs := 0
	kd.prepare = func(map[string]genome.Value, []int) runner {
		return func(in Inputs, out []float32) {
			runs++
			fn(runs, in, out)
		}
	}
	kd.testVariant = nil
	return kd
}

// exactSum writes the float64 sum of in.A rounded to float32.
func exactSum(in Inputs, out []float32) {
	s := 0.0
	for _, x := range in.A {
		s += float64(x)
	}
	out[0] = float32(s)
}

// exactRun is exactSum as a testDef run.
func exactRun(_ int, in Inputs, out []float32) { exactSum(in, out) }

func TestVerifyTolerance(t *testing.T) {
	t.Parallel()
	// Each kernel is the float32-rounded sum, then perturbed.
	scaled := func(f float64) func(int, Inputs, []float32) {
		return func(_ int, in Inputs, out []float32) { exactSum(in, out); out[0] = float32(float64(out[0]) * f) }
	}
	offset := func(d float64) func(int, Inputs, []float32) {
		return func(_ int, in Inputs, out []float32) { exactSum(in, out); out[0] = float32(float64(out[0]) + d) }
	}
	ulps := func(n int) func(int, Inputs, []float32) {
		return func(_ int, in Inputs, out []float32) {
			exactSum(in, out)
			for range n {
				out[0] = math.Nextafter32(out[0], float32(math.Inf(1)))
			}
		}
	}
	tests := []struct {
		name string
		run  func(int, Inputs, []float32)
		tol  string
		val  float64
		pass bool
	}{
		{"exact rel", exactRun, "rel", 1e-6, true},
		{"rel within", scaled(1 + 1e-5), "rel", 1e-4, true},
		{"rel over", scaled(1 + 1e-3), "rel", 1e-4, false},
		{"abs within", offset(1e-4), "abs", 1e-3, true},
		{"abs over", offset(1e-2), "abs", 1e-3, false},
		// An offset breaks the zeros case under a relative tolerance.
		{"offset rel", offset(1e-6), "rel", 1e-4, false},
		{"ulp within", ulps(3), "ulp", 4, true},
		{"ulp over", ulps(5), "ulp", 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := newKernel(testDef(nil, tt.run), Options{})
			set := evaluate.VerifySettings{Tolerance: tt.tol, Value: tt.val}
			rep := mustVerify(t, k, genome.Config{0}, problem(1000), set)
			if rep.Parity.Passed != tt.pass || rep.Parity.Tolerance != tt.tol || rep.Parity.Value != tt.val {
				t.Errorf("Verify(%s, %s %g).Parity = %+v, want passed %v", tt.name, tt.tol, tt.val, rep.Parity, tt.pass)
			}
		})
	}
}

func TestVerifyDeterminism(t *testing.T) {
	t.Parallel()
	// The output drifts by one ulp per run after the first.
	drift := func(run int, in Inputs, out []float32) {
		exactSum(in, out)
		if run > 1 {
			out[0] = math.Nextafter32(out[0], float32(math.Inf(1)))
		}
	}
	tests := []struct {
		name      string
		run       func(int, Inputs, []float32)
		policy    string
		repeats   int
		identical bool
		pass      bool
	}{
		{"deterministic", exactRun, "", 0, true, true},
		{"drift rejected", drift, "reject", 3, false, false},
		{"drift certified", drift, "certify", 4, false, true},
		{"one run", drift, "reject", 1, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := newKernel(testDef(nil, tt.run), Options{})
			set := evaluate.VerifySettings{Nondeterministic: tt.policy, Repeats: tt.repeats}
			d := mustVerify(t, k, genome.Config{0}, problem(1000), set).Determinism
			wantRuns := max(tt.repeats, 1)
			if tt.repeats == 0 {
				wantRuns = 3
			}
			if d.Identical != tt.identical || d.Passed != tt.pass || d.Runs != wantRuns || (d.MaxSpread > 0) == tt.identical {
				t.Errorf("Verify(%s).Determinism = %+v, want identical %v, passed %v, %d runs", tt.name, d, tt.identical, tt.pass, wantRuns)
			}
		})
	}
}

func TestVerifyPanic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		run   func(int, Inputs, []float32)
		where string
	}{
		{"first run", func(int, Inputs, []float32) { panic("boom") }, "seed=1: panic: boom"},
		{"determinism", func(run int, in Inputs, out []float32) {
			if run == 2 {
				panic("boom")
			}
			exactSum(in, out)
		}, "determinism: panic: boom"},
		{"worker", func(run int, in Inputs, out []float32) {
			if run == 4 {
				parallel(2, func(w int) { _ = in.A[len(in.A)+w] })
			}
			exactSum(in, out)
		}, "seed=2: panic: runtime error: index out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := newKernel(testDef(nil, tt.run), Options{})
			rep, err := k.Verify(context.Background(), genome.Config{0}, problem(100), evaluate.VerifySettings{})
			if err != nil {
				t.Fatalf("Verify = %v, want a failed report", err)
			}
			if rep.Passed() || rep.Parity.Passed || !strings.HasPrefix(rep.Parity.Worst, tt.where) {
				t.Errorf("Verify(%s) passed %v, parity %+v; want parity failed with %q", tt.name, rep.Passed(), rep.Parity, tt.where)
			}
		})
	}
	// A panic while preparing the config is the same.
	kd := testDef(nil, exactRun)
	kd.prepare = func(map[string]genome.Value, []int) runner { panic("no buffers") }
	rep, err := newKernel(kd, Options{}).Verify(context.Background(), genome.Config{0}, problem(100), fastVerify)
	if err != nil || rep.Parity.Passed || !strings.Contains(rep.Parity.Worst, "no buffers") {
		t.Errorf("Verify(panicking prepare) = %+v, %v; want parity failed with the panic", rep.Parity, err)
	}
}

func TestVerifyErrors(t *testing.T) {
	t.Parallel()
	k := mustNew(t, "sgemm", Options{})
	p := problem(37, 45, 41)
	s, _ := k.Space(p)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		c    genome.Config
		p    evaluate.Problem
		set  evaluate.VerifySettings
		want error // nil: any error containing text
		text string
	}{
		{"problem", context.Background(), s.Default(), problem(8, 8), fastVerify, evaluate.ErrUnknownProblem, ""},
		{"short config", context.Background(), genome.Config{0, 0}, p, fastVerify, evaluate.ErrNotInSpace, ""},
		{"constraint", context.Background(), genome.Config{3, 0, 0, 0, 0, 0, 0}, p, fastVerify, evaluate.ErrNotInSpace, ""},
		{"settings", context.Background(), s.Default(), p, evaluate.VerifySettings{Tolerance: "percent"}, nil, "tolerance"},
		{"cancelled", cancelled, s.Default(), p, fastVerify, context.Canceled, ""},
	}
	for _, tt := range tests {
		_, err := k.Verify(tt.ctx, tt.c, tt.p, tt.set)
		switch {
		case err == nil:
			t.Errorf("Verify(%s) = nil error", tt.name)
		case tt.want != nil && !errors.Is(err, tt.want):
			t.Errorf("Verify(%s) = %v, want %v", tt.name, err, tt.want)
		case tt.want == nil && !strings.Contains(err.Error(), tt.text):
			t.Errorf("Verify(%s) = %v, want it to name %q", tt.name, err, tt.text)
		}
	}

	// Cancelled between runs: the run in flight finishes, no more start.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs := 0
	kd := testDef(nil, func(run int, in Inputs, out []float32) {
		runs = run
		if run == 3 {
			cancel()
		}
		exactSum(in, out)
	})
	if _, err := newKernel(kd, Options{}).Verify(ctx, genome.Config{0}, problem(100), fastVerify); !errors.Is(err, context.Canceled) {
		t.Errorf("Verify(cancelled during runs) = %v, want context.Canceled", err)
	}
	if runs != 3 {
		t.Errorf("Verify ran %d times after cancel at run 3, want 3", runs)
	}
}

func TestRaggedDims(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kernel string
		dims   []int
		key    string
		want   string // the ragged case, or the skip note
	}{
		{"sgemm", []int{512, 512, 512}, "16,16,16,1,1,False,ijk,fp32", "257x257x257"},
		// 64 rows x 8 workers do not fit 257 rows; they fit 521.
		{"sgemm", []int{512, 512, 512}, "64,16,16,1,8,False,ijk,fp32", "521x521x521"},
		{"sgemm", []int{1, 1, 1}, "16,16,16,1,1,False,ijk,fp32", "2x2x2"},
		{"conv2d", []int{512, 512, 7}, "8,1,1,False,1,fp32", "263x263x7"},
		{"conv2d", []int{70, 70, 7}, "64,64,1,False,1,fp32", "73x73x7"},
		{"reduce", []int{1 << 24}, "65536,8,1,float32,fp32", "8388617"},
	}
	for _, tt := range tests {
		k := mustNew(t, tt.kernel, Options{})
		p := problem(tt.dims...)
		s, err := k.Space(p)
		if err != nil {
			t.Fatal(err)
		}
		v := &verification{k: k, c: parseKey(t, s, tt.key)}
		if got, note := v.raggedDims(tt.dims); joinDims(got) != tt.want {
			t.Errorf("%s %v %s: ragged dims = %v (%s), want %s", tt.kernel, tt.dims, tt.key, got, note, tt.want)
		}
	}

	// A config valid only at n = 64 has no ragged case: verification says so
	// and still passes.
	k := newKernel(testDef([]string{"n == 64"}, exactRun), Options{})
	rep := mustVerify(t, k, genome.Config{0}, problem(64), fastVerify)
	want := "ragged: skipped, config not valid on 37 or 67"
	if !slices.Contains(rep.Parity.Cases, want) || !rep.Passed() {
		t.Errorf("Verify(valid only at 64).Parity = %+v, passed %v; want the case %q and a pass", rep.Parity, rep.Passed(), want)
	}
}

func TestULPDist(t *testing.T) {
	t.Parallel()
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	tests := []struct {
		a, b float32
		want float64
	}{
		{1, 1, 0},
		{0, float32(math.Copysign(0, -1)), 0},
		{1, math.Nextafter32(1, 2), 1},
		{math.Nextafter32(0, 1), math.Nextafter32(0, -1), 2},
		{-1, math.Nextafter32(-1, -2), 1},
		{inf, inf, 0},
		{inf, math.MaxFloat32, math.Inf(1)},
		{nan, 1, math.Inf(1)},
	}
	for _, tt := range tests {
		if got := ulpDist(tt.a, tt.b); got != tt.want {
			t.Errorf("ulpDist(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// BenchmarkReduceErrorBounds checks the reduce kernel at n = 2^24 with a
// typical config (block 65536, unroll 8, one worker) for each accumulator,
// on positive inputs (uniform in [0, 1): a large sum, where float32 rounding
// shows) and on the default signed ones (uniform in [-1, 1)). It logs the
// a-priori bound and the measured error of the seed-1 sum, and the verdicts
// of a Verify with a tight tolerance, rel 1e-7.
//
//	go test ./evaluate/builtin -run '^$' -bench ReduceErrorBounds -benchtime 1x -v
func BenchmarkReduceErrorBounds(b *testing.B) {
	k := mustNew(b, "reduce", Options{})
	p := problem(1 << 24)
	s, err := k.Space(p)
	if err != nil {
		b.Fatal(err)
	}
	set := evaluate.VerifySettings{Tolerance: "rel", Value: 1e-7, Seeds: []uint64{1}}
	for _, inputs := range []string{"positive", "signed"} {
		gen := k.def.newInputs
		if inputs == "positive" {
			gen = positive(k)
		}
		in := gen(p.Dims, 1)
		ref, abs := refAbsReduce(p.Dims, in)
		for _, acc := range []string{"float32", "float64", "kahan"} {
			b.Run(inputs+"/"+acc, func(b *testing.B) {
				c := parseKey(b, s, "65536,8,1,"+acc+",fp32")
				out, err := k.Run(c, p, in)
				if err != nil {
					b.Fatal(err)
				}
				m := k.def.verify.bound(s.Map(c), p.Dims, in)
				bound := m.bound(ref[0], abs[0])
				e := math.Abs(float64(out[0]) - ref[0])
				var rep evaluate.VerifyReport
				for b.Loop() {
					rep, err = k.verify(context.Background(), c, p, set, gen)
					if err != nil {
						b.Fatal(err)
					}
				}
				verdict := map[bool]string{true: "pass", false: "FAIL"}
				b.Logf("%s %s: sum %.6g, sum|a| %.6g; bound %.4g (%.3g of |sum|), measured %.4g (%.3g), ratio %.3g; Verify rel 1e-7: parity %s (max rel err %.3g), error bound %s (worst ratio %.3g over all cases), %.0f ms\n\t%s",
					inputs, acc, ref[0], abs[0], bound, bound/math.Abs(ref[0]), e, e/math.Abs(ref[0]), e/bound,
					verdict[rep.Parity.Passed], rep.Parity.MaxRelErr, verdict[rep.ErrorBound.Passed], rep.ErrorBound.Ratio, rep.CostS*1000, m.formula)
				b.ReportMetric(bound, "bound")
				b.ReportMetric(e, "measured")
				b.ReportMetric(rep.Parity.MaxRelErr, "max_rel_err")
				b.ReportMetric(rep.CostS*1000, "verify_ms")
			})
		}
	}
}

// BenchmarkVerifySgemm512 measures what verification costs next to
// measuring: one Verify with the default settings and one Evaluate (default
// Options) of a good sgemm config at 512x512x512.
//
//	go test ./evaluate/builtin -run '^$' -bench VerifySgemm512 -benchtime 3x -v
func BenchmarkVerifySgemm512(b *testing.B) {
	k := mustNew(b, "sgemm", Options{})
	p := problem(512, 512, 512)
	s, err := k.Space(p)
	if err != nil {
		b.Fatal(err)
	}
	c := parseKey(b, s, "16,128,16,8,1,True,ikj,fp32")
	var verifyS, evalS, runMS float64
	var rep evaluate.VerifyReport
	for b.Loop() {
		t0 := time.Now()
		rep, err = k.Verify(context.Background(), c, p, evaluate.VerifySettings{})
		verifyS += time.Since(t0).Seconds()
		if err != nil || !rep.Passed() {
			b.Fatalf("Verify = %+v, %v", rep, err)
		}
		t0 = time.Now()
		tr, err := k.Evaluate(context.Background(), c, p)
		evalS += time.Since(t0).Seconds()
		if err != nil || !tr.OK() {
			b.Fatalf("Evaluate = %+v, %v", tr, err)
		}
		runMS += tr.Time
	}
	n := float64(b.N)
	v, e := verifyS/n*1000, evalS/n*1000
	b.Logf("sgemm 512^3 %s: Verify %.0f ms, Evaluate %.0f ms (median run %.1f ms), Verify = %.1f Evaluates = %.1f%% of 60",
		s.Key(c), v, e, runMS/n, v/e, 100*v/(60*e))
	b.ReportMetric(v, "verify_ms")
	b.ReportMetric(e, "evaluate_ms")
	b.ReportMetric(runMS/n, "run_ms")
	b.ReportMetric(100*v/(60*e), "pct_of_60_evals")
}
