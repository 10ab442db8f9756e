package spec

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quasim/quasim/evaluate/opencl"
)

const openclSource = `
// saxpy with a tunable work per item
__kernel void saxpy(__global float *y, __global const float *x, const float a, const int n) {
	int i = get_global_id(0);
	if (i < n) y[i] = a * x[i] + y[i];
}
`

const openclSpec = `name: saxpy
evaluator: opencl
problem_dims: [n]
problems: ["4096"]
opencl:
  source: saxpy.cl
  kernel: saxpy
  options: [-cl-mad-enable]
  tune_params:
    block_size_x: [32, 64, 128]
    work: [1, 2]
  problem_size: [n]
  grid_div_x: [block_size_x, work]
  args:
    - {name: y, type: float, size: n, fill: {constant: 1}, output: true}
    - {name: x, type: float, size: n, fill: random, seed: 7}
    - {name: a, type: float, value: "2.5"}
    - {name: n, type: int, value: n}
  check:
    reference: {block_size_x: 64}
    tolerance: {rel: 1e-5}
constraints:
  - block_size_x * work <= 128
`

// writeOpenCL writes the source and a spec (openclSpec with old replaced
// by new) into a new folder, returning the spec's path.
func writeOpenCL(t *testing.T, old, new string) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "saxpy.cl"), []byte(openclSource), 0o644); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(openclSpec, old, new, 1)
	if old != "" && src == openclSpec {
		t.Fatalf("%q not in the spec", old)
	}
	path := filepath.Join(dir, "saxpy.yaml")
	return path, []byte(src)
}

func TestParseOpenCL(t *testing.T) {
	t.Parallel()
	path, data := writeOpenCL(t, "", "")
	s, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	k := s.OpenCL
	if k == nil || k.Kernel != "saxpy" || len(k.Params) != 2 || k.Params[1].Name != "work" || len(k.Args) != 4 {
		t.Fatalf("OpenCL = %+v", k)
	}
	if k.Sources[0] != filepath.Join(filepath.Dir(path), "saxpy.cl") {
		t.Errorf("source %q, want it beside the spec", k.Sources[0])
	}
	if k.Args[1].Fill.Kind != "random" || k.Args[1].Fill.Seed != 7 || k.Args[0].Fill.Value != 1 || !k.Args[0].Output {
		t.Errorf("args %+v", k.Args)
	}
	if k.Check.Rel != 1e-5 || k.Check.Reference["block_size_x"] != int64(64) || k.Check.Sum {
		t.Errorf("check %+v", k.Check)
	}
	sumPath, sumData := writeOpenCL(t, "tolerance: {rel: 1e-5}", "tolerance: {rel: 1e-5}\n    compare: sum")
	if s, err := Parse(sumPath, sumData); err != nil || !s.OpenCL.Check.Sum {
		t.Errorf("check.compare sum: %v", err)
	}
	// iterations bounds the timed runs (Kernel Tuner's).
	itPath, itData := writeOpenCL(t, "  kernel: saxpy", "  kernel: saxpy\n  iterations: 7")
	if s3, err := Parse(itPath, itData); err != nil || s3.OpenCL.Iterations != 7 || k.Iterations != 0 {
		t.Errorf("opencl.iterations 7: %+v, %v", s3, err)
	}
	// An edited source is a new version of the spec.
	if err := os.WriteFile(k.Sources[0], []byte(openclSource+"\n// edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s2, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Hash == s.Hash {
		t.Errorf("hash %s unchanged by an edited source", s.Hash)
	}
	// Without a worker, Jobs says why it cannot run the kernel.
	if _, err := s.Jobs(); err == nil || !strings.Contains(err.Error(), "no worker") {
		t.Errorf("Jobs() without a worker = %v", err)
	}
	s.OpenCLRun = &OpenCLRun{Worker: []string{"/bin/false"}, Unavailable: "no platform"}
	if _, err := s.Jobs(); err == nil || !strings.Contains(err.Error(), "no OpenCL device on this machine: no platform") {
		t.Errorf("Jobs() without OpenCL = %v", err)
	}
}

func TestParseOpenCLErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, old, new, want string
	}{
		{"missing source", "source: saxpy.cl", "source: nope.cl", `opencl.source "nope.cl": no such file or directory (line 6)`},
		{"no such kernel", "kernel: saxpy", "kernel: sgemm", `opencl.kernel "sgemm": no __kernel of that name in saxpy.cl (line 7)`},
		{"size does not evaluate", "size: n, fill: random", "size: n * m, fill: random", `opencl.args[1].size: `},
		{"unknown type", "{name: a, type: float", "{name: a, type: float3", `opencl.args[2].type "float3": unknown type`},
		{"bad fill", "fill: random, seed: 7", "fill: gaussian, seed: 7", `opencl.args[1].fill "gaussian": want zero, random`},
		{"normal fill", "fill: random, seed: 7", "fill: {normal: [0, -1]}, seed: 7", `opencl.args[1].fill.normal: want [mean, std], got [0.0, -1.0]`},
		{"uniform fill", "fill: random, seed: 7", "fill: {uniform: [1]}, seed: 7", `opencl.args[1].fill.uniform: want [low, high], got 1 numbers`},
		{"reference not a value", "reference: {block_size_x: 64}", "reference: {block_size_x: 48}", `opencl.check.reference.block_size_x: 48 is not among its values`},
		{"unknown key", "  kernel: saxpy", "  kernal: saxpy", `opencl.kernal: unknown key (want one of source, kernel,`},
		{"answer of an input", "fill: random, seed: 7", "fill: random, seed: 7, answer: a.npy", `opencl.args[1].answer "a.npy": no such file`},
		{"scalar output", `value: "2.5"}`, `value: "2.5", output: true}`, `opencl.args[2].output: a scalar cannot be an output`},
		{"grid divisor", "grid_div_x: [block_size_x, work]", "grid_div_x: [block_size_x, wrk]", `opencl.grid_div_x[1]: `},
		{"section without evaluator", "evaluator: opencl", "evaluator: builtin:sgemm", `opencl: an opencl section needs evaluator: opencl`},
		{"param is a dim", "    work: [1, 2]", "    n: [1, 2]", `opencl.tune_params.n "n" is also a problem dim`},
		{"allclose tolerance", "tolerance: {rel: 1e-5}", "tolerance: {rel: 1e-5, atol: 1}\n    compare: allclose", `opencl.check.tolerance.atol: unknown key`},
		{"iterations", "  kernel: saxpy", "  kernel: saxpy\n  iterations: 0", `opencl.iterations: 0: want 1 to 1000`},
		{"compare", "tolerance: {rel: 1e-5}", "tolerance: {rel: 1e-5}\n    compare: total", `opencl.check.compare "total": want elements, sum or allclose`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, data := writeOpenCL(t, tt.old, tt.new)
			_, err := Parse(path, data)
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("Parse(%s) = %v, want %s: ...%s...", tt.name, err, path, tt.want)
			}
			var fe *FieldError
			if errors.As(err, &fe) && fe.Line == 0 {
				t.Errorf("Parse(%s) = %v: no line", tt.name, err)
			}
		})
	}
}

// TestDataJoinsHash: every argument file's content, in the order given,
// is part of the spec's source hash (hashed concurrently, hashData).
func TestDataJoinsHash(t *testing.T) {
	path, data := writeOpenCL(t, "fill: {constant: 1}, output: true}\n    - {name: x, type: float, size: n, fill: random, seed: 7}",
		"data: y.npy, output: true}\n    - {name: x, type: float, size: n, data: x.npy}")
	dir := filepath.Dir(path)
	put := func(name string, v float64) {
		b := make([]byte, 4096*4)
		for i := range 4096 {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
		}
		f, err := opencl.WriteNPY(opencl.Array{Type: "float", Len: 4096, Bytes: b})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), f, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hash := func() string {
		s, err := Parse(path, data)
		if err != nil {
			t.Fatal(err)
		}
		return s.SourceSHA256()
	}
	put("y.npy", 1)
	put("x.npy", 2)
	first := hash()
	if again := hash(); again != first {
		t.Fatalf("the same files hash to %s, then %s", first, again)
	}
	put("x.npy", 3)
	changed := hash()
	if changed == first {
		t.Errorf("x.npy's content changed, the hash did not")
	}
	put("y.npy", 3)
	if swapped := hash(); swapped == changed || swapped == first {
		t.Errorf("y.npy's content changed, the hash did not")
	}
	put("y.npy", 2)
	put("x.npy", 1)
	if swapped := hash(); swapped == first {
		t.Errorf("the files' contents swapped, the hash did not change")
	}
}
