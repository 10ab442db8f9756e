package builtin

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

// eps32 is the float32 machine epsilon, 2^-23.
const eps32 = 1.0 / (1 << 23)

func mustNew(t testing.TB, name string, opt Options) *Kernel {
	t.Helper()
	k, err := New(name, opt)
	if err != nil {
		t.Fatalf("New(%q) = %v", name, err)
	}
	return k
}

func problem(dims ...int) evaluate.Problem { return evaluate.Problem{Dims: dims} }

func TestKernels(t *testing.T) {
	t.Parallel()
	want := []string{"conv2d", "reduce", "sgemm"}
	if got := Kernels(); !slices.Equal(got, want) {
		t.Fatalf("Kernels() = %v, want %v", got, want)
	}
	for _, name := range want {
		k := mustNew(t, name, Options{})
		if k.Name() != name {
			t.Errorf("New(%q).Name() = %q", name, k.Name())
		}
	}
}

func TestNewUnknown(t *testing.T) {
	t.Parallel()
	tests := []string{"", "SGEMM", "dgemm", "conv"}
	for _, name := range tests {
		_, err := New(name, Options{})
		if !errors.Is(err, ErrUnknownKernel) {
			t.Errorf("New(%q) = %v, want ErrUnknownKernel", name, err)
			continue
		}
		for _, known := range Kernels() {
			if !strings.Contains(err.Error(), known) {
				t.Errorf("New(%q) error %q does not list %q", name, err, known)
			}
		}
	}
}

func TestDevice(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opt  Options
		want string
	}{
		{"set", Options{Device: "cpu/test/1c"}, "cpu/test/1c"},
		{"default", Options{}, "cpu/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := mustNew(t, "reduce", tt.opt).Device()
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("Device() = %q, want prefix %q", got, tt.want)
			}
		})
	}
}

// TestSpaces checks every default problem: a space of a sensible size whose
// default config is valid.
func TestSpaces(t *testing.T) {
	t.Parallel()
	for _, name := range Kernels() {
		k := mustNew(t, name, Options{})
		ps := k.DefaultProblems()
		if len(ps) == 0 {
			t.Errorf("%s: no default problems", name)
		}
		for _, p := range ps {
			s, err := k.Space(p)
			if err != nil {
				t.Errorf("%s Space(%v) = %v", name, p, err)
				continue
			}
			if n := s.Size(); n < 100 || n > 12000 {
				t.Errorf("%s Space(%v).Size() = %d, want 100..12000", name, p, n)
			}
			if err := s.Check(s.Default()); err != nil {
				t.Errorf("%s Space(%v): default config: %v", name, p, err)
			}
			if len(p.Names) != len(p.Dims) || p.Name == "" {
				t.Errorf("%s default problem %+v: want Name and Names", name, p)
			}
		}
	}
}

// TestDefaultAlwaysValid checks that the default config is valid even for
// problems smaller than every tile.
func TestDefaultAlwaysValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kernel string
		dims   []int
	}{
		{"sgemm", []int{1, 1, 1}},
		{"sgemm", []int{3, 100, 7}},
		{"conv2d", []int{1, 1, 1}},
		{"conv2d", []int{5, 9, 5}},
		{"reduce", []int{1}},
		{"reduce", []int{300}},
	}
	for _, tt := range tests {
		k := mustNew(t, tt.kernel, Options{})
		s, err := k.Space(problem(tt.dims...))
		if err != nil {
			t.Errorf("%s Space(%v) = %v", tt.kernel, tt.dims, err)
			continue
		}
		if err := s.Check(s.Default()); err != nil {
			t.Errorf("%s Space(%v): default config: %v", tt.kernel, tt.dims, err)
		}
	}
}

func TestBadProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kernel string
		dims   []int
	}{
		{"sgemm", nil},
		{"sgemm", []int{8, 8}},
		{"sgemm", []int{8, 8, 8, 8}},
		{"sgemm", []int{8, 0, 8}},
		{"sgemm", []int{-8, 8, 8}},
		{"sgemm", []int{1 << 20, 1 << 20, 1 << 20}},
		{"sgemm", []int{1 << 40, 1, 1}},
		{"conv2d", []int{16, 16}},
		{"conv2d", []int{16, 16, 0}},
		{"conv2d", []int{4, 16, 5}},
		{"conv2d", []int{16, 4, 5}},
		{"reduce", []int{}},
		{"reduce", []int{0}},
		{"reduce", []int{16, 16}},
		{"reduce", []int{1 << 30}},
	}
	ctx := context.Background()
	for _, tt := range tests {
		k := mustNew(t, tt.kernel, Options{})
		p := problem(tt.dims...)
		if _, err := k.Space(p); !errors.Is(err, evaluate.ErrUnknownProblem) {
			t.Errorf("%s Space(%v) = %v, want ErrUnknownProblem", tt.kernel, tt.dims, err)
		}
		if _, err := k.Evaluate(ctx, genome.Config{0, 0, 0, 0, 0, 0, 0}, p); !errors.Is(err, evaluate.ErrUnknownProblem) {
			t.Errorf("%s Evaluate(%v) = %v, want ErrUnknownProblem", tt.kernel, tt.dims, err)
		}
		if _, err := k.Run(genome.Config{0, 0, 0, 0, 0, 0, 0}, p, Inputs{}); !errors.Is(err, evaluate.ErrUnknownProblem) {
			t.Errorf("%s Run(%v) = %v, want ErrUnknownProblem", tt.kernel, tt.dims, err)
		}
		if in := k.NewInputs(p, 1); in.A != nil || in.B != nil {
			t.Errorf("%s NewInputs(%v) = %d,%d values, want none", tt.kernel, tt.dims, len(in.A), len(in.B))
		}
		if ref := k.Reference(p, Inputs{}); ref != nil {
			t.Errorf("%s Reference(%v) = %d values, want nil", tt.kernel, tt.dims, len(ref))
		}
	}
}

func TestNotInSpace(t *testing.T) {
	t.Parallel()
	k := mustNew(t, "sgemm", Options{Reps: evaluate.Reps{Max: 1}})
	p := problem(37, 45, 41)
	s, err := k.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	tileM, _ := s.Param("tile_m")
	big := s.Default()
	big[tileM] = 3 // 128 > m
	tests := []struct {
		name string
		c    genome.Config
	}{
		{"nil", nil},
		{"short", genome.Config{0, 0, 0}},
		{"long", append(s.Default(), 0)},
		{"negative", genome.Config{-1, 0, 0, 0, 0, 0, 0}},
		{"out of range", genome.Config{0, 0, 0, 0, 0, 0, 3}},
		{"constraint", big},
	}
	in := k.NewInputs(p, 1)
	for _, tt := range tests {
		if _, err := k.Evaluate(context.Background(), tt.c, p); !errors.Is(err, evaluate.ErrNotInSpace) {
			t.Errorf("Evaluate(%s %v) = %v, want ErrNotInSpace", tt.name, tt.c, err)
		}
		if _, err := k.Run(tt.c, p, in); !errors.Is(err, evaluate.ErrNotInSpace) {
			t.Errorf("Run(%s %v) = %v, want ErrNotInSpace", tt.name, tt.c, err)
		}
	}
}

func TestRunBadInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kernel string
		dims   []int
		in     Inputs
	}{
		{"sgemm", []int{4, 5, 6}, Inputs{A: make([]float32, 24), B: make([]float32, 29)}},
		{"sgemm", []int{4, 5, 6}, Inputs{A: make([]float32, 23), B: make([]float32, 30)}},
		{"conv2d", []int{8, 8, 3}, Inputs{A: make([]float32, 64), B: make([]float32, 8)}},
		{"reduce", []int{10}, Inputs{A: make([]float32, 9)}},
		{"reduce", []int{10}, Inputs{A: make([]float32, 10), B: make([]float32, 1)}},
	}
	for _, tt := range tests {
		k := mustNew(t, tt.kernel, Options{})
		p := problem(tt.dims...)
		s, err := k.Space(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.Run(s.Default(), p, tt.in); !errors.Is(err, ErrBadInputs) {
			t.Errorf("%s Run(%v, %d/%d inputs) = %v, want ErrBadInputs", tt.kernel, tt.dims, len(tt.in.A), len(tt.in.B), err)
		}
		if ref := k.Reference(p, tt.in); ref != nil {
			t.Errorf("%s Reference(%v) with bad inputs = %d values, want nil", tt.kernel, tt.dims, len(ref))
		}
	}
}

func TestNewInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kernel string
		dims   []int
		na, nb int
	}{
		{"sgemm", []int{3, 4, 5}, 15, 20},
		{"conv2d", []int{6, 7, 3}, 42, 9},
		{"reduce", []int{11}, 11, 0},
	}
	for _, tt := range tests {
		k := mustNew(t, tt.kernel, Options{})
		p := problem(tt.dims...)
		a, b, c := k.NewInputs(p, 7), k.NewInputs(p, 7), k.NewInputs(p, 8)
		if len(a.A) != tt.na || len(a.B) != tt.nb {
			t.Errorf("%s NewInputs(%v) = %d,%d values, want %d,%d", tt.kernel, tt.dims, len(a.A), len(a.B), tt.na, tt.nb)
		}
		if !slices.Equal(a.A, b.A) || !slices.Equal(a.B, b.B) {
			t.Errorf("%s NewInputs(%v, 7) differs between calls", tt.kernel, tt.dims)
		}
		if slices.Equal(a.A, c.A) {
			t.Errorf("%s NewInputs(%v) equal for seeds 7 and 8", tt.kernel, tt.dims)
		}
		for _, x := range slices.Concat(a.A, a.B) {
			if x < -1 || x >= 1 {
				t.Errorf("%s NewInputs(%v) value %v outside [-1, 1)", tt.kernel, tt.dims, x)
			}
		}
	}
}

// errorFactor is the factor f in the bound |out - ref| <= f·eps32·Σ|terms|
// for config c of problem dims: the length of the summation for plain fp32
// accumulation, a small constant for compensated or float64 accumulation.
func errorFactor(kernel string, s *genome.Space, c genome.Config, dims []int) float64 {
	switch kernel {
	case "sgemm":
		return float64(dims[2])
	case "conv2d":
		return float64(dims[2] * dims[2])
	}
	switch s.Map(c)["acc"].S {
	case "float64":
		return 1
	case "kahan":
		return 4
	}
	return float64(dims[0])
}

// TestMatchesReference runs every config (or a seeded sample) of each kernel
// on small problems whose sizes are not multiples of the tiles, and checks
// the output against the float64 reference and that a second run is
// bitwise identical.
func TestMatchesReference(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kernel string
		dims   []int
		sample int // 0: every config
	}{
		{"sgemm", []int{37, 45, 41}, 0},
		{"sgemm", []int{1, 1, 1}, 0},
		{"sgemm", []int{97, 133, 139}, 60},
		{"conv2d", []int{37, 41, 5}, 0},
		{"conv2d", []int{3, 3, 3}, 0},
		{"conv2d", []int{70, 300, 9}, 60},
		{"reduce", []int{100_003}, 0},
		{"reduce", []int{5}, 0},
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
			configs := fullPrecision(s, s.All(), len(s.All()))
			if tt.sample > 0 {
				configs = fullPrecision(s, sampleConfigs(s, tt.sample, 1), tt.sample)
			}
			if len(configs) == 0 {
				t.Fatal("no configs")
			}
			in := k.NewInputs(p, 2)
			ref := k.Reference(p, in)
			scale := k.Reference(p, absInputs(in))
			for _, c := range configs {
				out, err := k.Run(c, p, in)
				if err != nil {
					t.Fatalf("Run(%s) = %v", s.Key(c), err)
				}
				if len(out) != len(ref) {
					t.Fatalf("Run(%s) = %d values, want %d", s.Key(c), len(out), len(ref))
				}
				f := errorFactor(tt.kernel, s, c, tt.dims)
				for i := range out {
					tol := f*eps32*scale[i] + 1e-30
					if d := math.Abs(float64(out[i]) - ref[i]); !(d <= tol) {
						t.Fatalf("Run(%s)[%d] = %v, want %v ± %g", s.Key(c), i, out[i], ref[i], tol)
					}
				}
				again, err := k.Run(c, p, in)
				if err != nil {
					t.Fatalf("Run(%s) again = %v", s.Key(c), err)
				}
				if !slices.Equal(out, again) {
					t.Fatalf("Run(%s) is not deterministic", s.Key(c))
				}
			}
		})
	}
}

// TestReducePrecision checks the precision side of the accumulator choice: on
// a long all-positive vector, float64 and kahan are far more accurate than a
// plain float32 sum.
func TestReducePrecision(t *testing.T) {
	t.Parallel()
	k := mustNew(t, "reduce", Options{})
	p := problem(1 << 20)
	s, err := k.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	in := absInputs(k.NewInputs(p, 3))
	ref := k.Reference(p, in)[0]
	relErr := func(key string) float64 {
		c, err := s.ParseKey(key)
		if err != nil {
			t.Fatal(err)
		}
		out, err := k.Run(c, p, in)
		if err != nil {
			t.Fatal(err)
		}
		return math.Abs(float64(out[0])-ref) / ref
	}
	naive := relErr("262144,1,1,float32,fp32")
	tests := []string{"262144,1,1,float64,fp32", "262144,1,1,kahan,fp32", "256,8,2,kahan,fp32"}
	for _, key := range tests {
		if e := relErr(key); e > 2*eps32 || e > naive/10 {
			t.Errorf("relative error of %s = %g, want <= %g and well below float32's %g", key, e, 2*eps32, naive)
		}
	}
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		kernel string
		dims   []int
		opt    Options
	}{
		{"sgemm", []int{33, 20, 17}, Options{}},
		{"conv2d", []int{20, 30, 3}, Options{Reps: evaluate.Reps{Min: 2, Max: 4}}},
		{"reduce", []int{1000}, Options{Reps: evaluate.Reps{Warmup: -1, Min: 5, Max: 5}}},
		{"reduce", []int{1000}, Options{Reps: evaluate.Reps{Min: 1, Max: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.kernel, func(t *testing.T) {
			t.Parallel()
			opt := tt.opt
			opt.Now = func() time.Time { return at }
			opt.Device = "cpu/test/1c"
			k := mustNew(t, tt.kernel, opt)
			p := problem(tt.dims...)
			s, err := k.Space(p)
			if err != nil {
				t.Fatal(err)
			}
			c := s.All()[len(s.All())/2]
			tr, err := k.Evaluate(context.Background(), c, p)
			if err != nil {
				t.Fatalf("Evaluate(%s) = %v", s.Key(c), err)
			}
			o := k.opt
			switch {
			case tr.Status != evaluate.StatusOK || tr.Error != "":
				t.Errorf("Evaluate(%s).Status = %s %q, want ok", s.Key(c), tr.Status, tr.Error)
			case tr.Key != s.Key(c):
				t.Errorf("Evaluate(%s).Key = %q", s.Key(c), tr.Key)
			case tr.Device != "cpu/test/1c" || !tr.At.Equal(at):
				t.Errorf("Evaluate(%s) Device, At = %q, %v", s.Key(c), tr.Device, tr.At)
			case len(tr.Times) < o.Reps.Min || len(tr.Times) > o.Reps.Max:
				t.Errorf("Evaluate(%s) made %d reps, want %d..%d", s.Key(c), len(tr.Times), o.Reps.Min, o.Reps.Max)
			case tr.Time != median(tr.Times) || tr.Time <= 0:
				t.Errorf("Evaluate(%s).Time = %v, want median of %v", s.Key(c), tr.Time, tr.Times)
			case tr.Cost <= 0 || tr.Cost*1000 < sum(tr.Times):
				t.Errorf("Evaluate(%s).Cost = %v s, want at least the %v ms of the reps", s.Key(c), tr.Cost, sum(tr.Times))
			}
		})
	}
}

func sum(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// fakeDef is a one-parameter kernel whose single run is fn.
func fakeDef(fn runner) def {
	return def{
		name:     "fake",
		dims:     []string{"n"},
		defaults: [][]int{{4}},
		params:   []genome.Param{intParam("x", 0, 1, 2)},
		sizes:    func(d []int) (int, int, int) { return d[0], 0, 1 },
		prepare:  func(map[string]genome.Value, []int) runner { return fn },
		ref:      func([]int, Inputs) []float64 { return []float64{0} },
	}
}

func TestEvaluatePanic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  runner
	}{
		{"inline", func(Inputs, []float32) { panic("boom") }},
		{"worker", func(Inputs, []float32) {
			parallel(3, func(w int) {
				if w == 2 {
					panic("boom")
				}
			})
		}},
		{"index", func(in Inputs, _ []float32) { _ = in.A[len(in.A)+1] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := newKernel(fakeDef(tt.run), Options{})
			p := problem(4)
			tr, err := k.Evaluate(context.Background(), genome.Config{0}, p)
			if err != nil {
				t.Fatalf("Evaluate = %v, want a runtime trial", err)
			}
			if tr.Status != evaluate.StatusRuntime || !strings.Contains(tr.Error, "panic") || tr.Cost <= 0 {
				t.Errorf("Evaluate = %+v, want status runtime with the panic", tr)
			}
			if _, err := k.Run(genome.Config{0}, p, k.NewInputs(p, 1)); err == nil || !strings.Contains(err.Error(), "panic") {
				t.Errorf("Run = %v, want the panic", err)
			}
		})
	}
}

func TestEvaluateCancelled(t *testing.T) {
	t.Parallel()
	t.Run("before", func(t *testing.T) {
		t.Parallel()
		k := mustNew(t, "reduce", Options{})
		p := problem(1000)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := k.Evaluate(ctx, genome.Config{0, 0, 0, 2, 0}, p); !errors.Is(err, context.Canceled) {
			t.Errorf("Evaluate(cancelled) = %v, want context.Canceled", err)
		}
	})
	t.Run("during", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		runs := 0
		k := newKernel(fakeDef(func(Inputs, []float32) {
			runs++
			if runs == 3 {
				cancel()
			}
		}), Options{Reps: evaluate.Reps{Min: 10, Max: 10}})
		if _, err := k.Evaluate(ctx, genome.Config{0}, problem(4)); !errors.Is(err, context.Canceled) {
			t.Errorf("Evaluate(cancelled during reps) = %v, want context.Canceled", err)
		}
		if runs != 3 {
			t.Errorf("Evaluate ran %d times after cancel at run 3, want 3", runs)
		}
	})
}

func TestOptionsDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Options
		want Options // Device and Now are checked apart
	}{
		{"zero", Options{}, Options{Reps: evaluate.Reps{}.WithDefaults(), Seed: 1}},
		{"set", Options{Reps: evaluate.Reps{Warmup: -1, Min: 1, Max: 9}, Seed: 5}, Options{Reps: evaluate.Reps{Warmup: 0, Min: 1, Max: 9, MaxTime: 2 * time.Second, RelCI: 0.03}, Seed: 5}},
	}
	for _, tt := range tests {
		got := tt.in.withDefaults()
		if got.Device == "" || got.Now == nil {
			t.Errorf("%s: withDefaults() left Device or Now unset", tt.name)
		}
		got.Device, got.Now = "", nil
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: withDefaults() = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
