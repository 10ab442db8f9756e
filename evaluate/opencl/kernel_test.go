package opencl

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/quasim/quasim/genome"
)

func TestKernelParams(t *testing.T) {
	src := `
#define INPUT_T __global const float *restrict
// __kernel void gone(int a) in a comment
__kernel __attribute__((reqd_work_group_size(MDIMC, NDIMC, 1)))
void Xgemm(const int kSizeM, const real_arg arg_alpha, INPUT_T input,
           const __global realM* restrict agm, __global float *c, const float s) { }
`
	decls, ok := KernelParams(src, "Xgemm")
	if !ok || len(decls) != 6 || decls[2] != "INPUT_T input" {
		t.Fatalf("KernelParams = %q, %v", decls, ok)
	}
	if _, ok := KernelParams(src, "gone"); ok {
		t.Errorf("KernelParams found a kernel in a comment")
	}
	buf := func(name string) Arg { return Arg{Name: name, Type: "float", Size: "n"} }
	val := func(name string) Arg { return Arg{Name: name, Type: "int", Value: "1"} }
	tests := []struct {
		args []Arg
		want string // "" for none
	}{
		{[]Arg{val("m"), val("alpha"), buf("in"), buf("a"), buf("c"), val("s")}, ""},
		// A macro's type is not told: either kind passes there.
		{[]Arg{val("m"), buf("alpha"), val("in"), buf("a"), buf("c"), val("s")}, ""},
		{[]Arg{buf("m"), val("alpha"), buf("in"), buf("a"), buf("c"), val("s")}, `args[0]: m is a buffer, but parameter 0 of Xgemm is "const int kSizeM", a scalar`},
		{[]Arg{val("m"), val("alpha"), buf("in"), val("a"), buf("c"), val("s")}, `args[3]: a is a scalar`},
		{[]Arg{val("m"), val("alpha"), buf("in"), buf("a"), buf("c")}, "args: 5 arguments, but Xgemm takes 6"},
	}
	for _, tt := range tests {
		err := CheckArgs(tt.args, decls, "Xgemm")
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckArgs(%v) = %v, want %q", tt.args, err, tt.want)
		}
	}
}

func TestLaunch(t *testing.T) {
	k := Kernel{
		Kernel: "mm", Sources: []string{"mm.cl"},
		Params: []Param{{Name: "block_size_x", Values: []any{16}}, {Name: "block_size_y", Values: []any{4}},
			{Name: "tile_size_x", Values: []any{4}}, {Name: "tile_size_y", Values: []any{2}}},
		ProblemDims: []string{"n"},
		ProblemSize: []string{"n", "n"},
		GridDiv:     [3][]string{{"block_size_x", "tile_size_x"}, {"block_size_y", "tile_size_y"}},
		Args:        []Arg{{Name: "c", Type: "float", Size: "n*n", Output: true}},
	}
	g, err := k.Compile()
	if err != nil {
		t.Fatal(err)
	}
	cfg := []genome.Value{genome.Int(16), genome.Int(4), genome.Int(4), genome.Int(2)}
	l, err := g.Launch(cfg, []int{4096})
	if err != nil {
		t.Fatal(err)
	}
	// The example of the package doc.
	if l.Groups[0] != 64 || l.Groups[1] != 512 || l.Global[0] != 1024 || l.Global[1] != 2048 || l.Local[0] != 16 || l.Local[1] != 4 {
		t.Errorf("Launch = %+v, want 64×512 groups of 16×4, global 1024×2048", l)
	}
	// Rounded up: 4100 needs one more group in x.
	if l, _ = g.Launch(cfg, []int{4100}); l.Groups[0] != 65 {
		t.Errorf("Launch(4100) = %+v, want 65 groups in x", l)
	}
	// Kernel Tuner's prefix: grid sizes (work-groups), block sizes (z
	// too), the parameters in order, kernel_tuner.
	want := "#define grid_size_x 65\n#define grid_size_y 513\n#define grid_size_z 1\n#define block_size_x 16\n" +
		"#define block_size_y 4\n#define block_size_z 1\n#define tile_size_x 4\n#define tile_size_y 2\n#define kernel_tuner 1\n#line 1\n"
	if got := g.Prefix(cfg, l); got != want {
		t.Errorf("Prefix = %q, want %q", got, want)
	}
	if got := g.Limits(Device{MaxWorkGroup: 4096, MaxWorkItems: []int{4096, 4096, 4096}}); strings.Join(got, "; ") != "block_size_x <= 4096; block_size_y <= 4096; block_size_x * block_size_y <= 4096" {
		t.Errorf("Limits = %q", got)
	}
	if d := define(genome.Float(2)); d != "2" {
		t.Errorf("define(2.0) = %q, want 2 as JSON writes it", d)
	}
	if d := define(genome.Bool(true)); d != "1" {
		t.Errorf("define(true) = %q", d)
	}
}

// FuzzKernel reads a kernel description as the worker does (JSON), and
// the kernel's parameters from a source: never a panic; a kernel that
// compiles gives a launch or an error for each config of first values.
func FuzzKernel(f *testing.F) {
	f.Add(`{"sources":["a.cl"],"kernel":"k","params":[{"name":"block_size_x","values":[16,32]}],"problem_dims":["n"],"problem_size":["n"],"grid_div":[["block_size_x","2"],null,null],"args":[{"name":"y","type":"float","size":"n","output":true},{"name":"n","type":"int","value":"n // 2"}]}`,
		"__kernel void k(__global float *y, int n) {}", 4096)
	f.Add(`{"sources":["a.cl"],"kernel":"k","params":[{"name":"x","values":[0]}],"block_size_names":["1","x"],"problem_size":["7","x+1"],"grid_div":[[],["x"],null],"args":[{"type":"uchar","size":"3","output":true}]}`,
		"kernel void k(global uchar *p) {", 1)
	f.Fuzz(func(t *testing.T, desc, src string, dim int) {
		KernelParams(src, "k")
		DefinesKernel(src, "k")
		var k Kernel
		if json.Unmarshal([]byte(desc), &k) != nil {
			return
		}
		g, err := k.Compile()
		if err != nil {
			return
		}
		params, err := genomeParams(k.Params)
		if err != nil {
			return
		}
		cfg := make([]genome.Value, len(params))
		for i, p := range params {
			cfg[i] = p.Values[0]
		}
		dims := make([]int, len(k.ProblemDims))
		for i := range dims {
			dims[i] = dim
		}
		if l, err := g.Launch(cfg, dims); err == nil {
			for d := range l.Global {
				if l.Local[d] <= 0 || l.Global[d] != l.Groups[d]*l.Local[d] {
					t.Fatalf("Launch = %+v", l)
				}
			}
			if p := g.Prefix(cfg, l); !strings.HasSuffix(p, "#define kernel_tuner 1\n#line 1\n") {
				t.Fatalf("Prefix = %q", p)
			}
		}
		for i, a := range k.Args {
			if a.Size != "" {
				g.BufferLen(i, dims)
			} else {
				g.ScalarValue(i, cfg, dims)
			}
		}
	})
}

// TestCompareSum checks outputs by their sums: per-work-group partial
// sums laid out differently pass when they add up to the reference's.
func TestCompareSum(t *testing.T) {
	f32 := func(xs ...float32) []byte {
		b := make([]byte, 4*len(xs))
		for i, x := range xs {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	}
	want := f32(6, 0, 0, 0)
	sum := Check{Sum: true, Rel: 1e-6}
	if m := compare("sum", f32(1, 2, 3, 0), want, Types["float"], sum); m != nil {
		t.Errorf("partials 1+2+3 against 6: %s", m)
	}
	m := compare("sum", f32(1, 2, 4, 0), want, Types["float"], sum)
	if m == nil || m.String() != "output sum sums to 7.0, the reference to 6.0" {
		t.Errorf("partials 1+2+4 against 6: %v", m)
	}
	if m := compare("sum", f32(1, 2, 3, 0), want, Types["float"], Check{Rel: 1e-6}); m == nil || m.Bad != 3 {
		t.Errorf("element by element: %v, want 3 elements differing", m)
	}
}
