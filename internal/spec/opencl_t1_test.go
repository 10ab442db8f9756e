package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// saxpyT1 is a FAIR T1 file of openclSource's kernel; args replaces its
// Arguments and options its CompilerOptions.
func saxpyT1(args, options string) string {
	return `{"General": {"BenchmarkName": "saxpy_t1"},
 "ConfigurationSpace": {
  "TuningParameters": [
   {"Name": "block_size_x", "Type": "int", "Values": "[32, 64, 128]", "Default": 64},
   {"Name": "work", "Type": "int", "Values": "[1, 2]", "Default": 1}],
  "Conditions": [{"Expression": "block_size_x * work <= 128", "Parameters": ["block_size_x", "work"]}]},
 "KernelSpecification": {
  "Language": "OpenCL", "CompilerOptions": ` + options + `,
  "KernelName": "saxpy", "KernelFile": "saxpy.cl", "GlobalSizeType": "OpenCL",
  "LocalSize": {"X": "block_size_x", "Y": "1", "Z": "1"},
  "GlobalSize": {"X": "4096", "Y": "1", "Z": "1"},
  "GridDivX": ["block_size_x", "work"],
  "ProblemSize": [4096],
  "Arguments": ` + args + `}}`
}

const saxpyArgs = `[
   {"Name": "y", "Type": "float", "Size": 4096, "MemoryType": "Vector", "AccessType": "ReadWrite", "FillType": "Constant", "FillValue": 1.0, "Output": 1},
   {"Name": "x", "Type": "float", "Size": 4096, "MemoryType": "Vector", "AccessType": "ReadOnly", "FillType": "Random", "FillValue": 1.0},
   {"Name": "a", "Type": "float", "MemoryType": "Scalar", "FillValue": 2.5},
   {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 4096}]`

// hotspotArgs are the Arguments the public hub's gemm T1 carries: those
// of another kernel.
const hotspotArgs = `[
   {"Name": "power", "Type": "float", "Size": 25160256, "MemoryType": "Vector", "AccessType": "ReadOnly", "FillType": "Random", "FillValue": 1.0},
   {"Name": "temp", "Type": "float", "Size": 16777216, "MemoryType": "Vector", "AccessType": "ReadOnly", "FillType": "Random", "FillValue": 324.0},
   {"Name": "temp_dst", "Type": "float", "Size": 16777216, "MemoryType": "Vector", "AccessType": "ReadWrite", "FillType": "Constant", "FillValue": 0.0, "Output": 1},
   {"Name": "Rx_1", "Type": "float", "MemoryType": "Scalar", "AccessType": "ReadOnly", "FillValue": 0.1}]`

func writeT1(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["saxpy.cl"] = openclSource
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOpenCLT1AsWritten(t *testing.T) {
	t.Parallel()
	dir := writeT1(t, map[string]string{"saxpy.T1.json": saxpyT1(saxpyArgs, `[]`)})
	path := filepath.Join(dir, "saxpy.T1.json")
	data, _ := os.ReadFile(path)
	s, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if s.Evaluator != "opencl" || s.OpenCL == nil || s.Note != "" {
		t.Fatalf("Parse(T1) = evaluator %q, note %q: want a tunable opencl spec", s.Evaluator, s.Note)
	}
	k := s.OpenCL
	if k.Kernel != "saxpy" || len(k.Args) != 4 || !k.Args[0].Output || k.Args[1].Fill.Kind != "random" || k.Args[2].Value != "2.5" {
		t.Errorf("kernel %+v", k)
	}
	if k.Params[0].Default != int64(64) || len(s.Constraints) != 1 {
		t.Errorf("params %+v constraints %v", k.Params, s.Constraints)
	}
}

func TestOpenCLT1Wrong(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, t1 string
		want     []string
	}{
		{"other kernel's arguments", saxpyT1(hotspotArgs, `[]`),
			[]string{`KernelSpecification.Arguments[2]: temp_dst is a buffer, but parameter 2 of saxpy is "const float a", a scalar`, "does not match the kernel"}},
		{"arguments count", saxpyT1(strings.Replace(saxpyArgs, `,
   {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 4096}`, "", 1), `[]`),
			[]string{"KernelSpecification.Arguments: 3 arguments, but saxpy takes 4"}},
		{"a CUDA option", saxpyT1(saxpyArgs, `["-std=c++11"]`),
			[]string{`KernelSpecification.CompilerOptions "-std=c++11" is not an OpenCL compiler option`}},
		{"no kernel file", strings.Replace(saxpyT1(saxpyArgs, `[]`), `"saxpy.cl"`, `"gemm_milo/common.opencl"`, 1),
			[]string{`KernelSpecification.KernelFile "gemm_milo/common.opencl": no such file or directory`}},
		{"a fill quasim lacks", strings.Replace(saxpyT1(saxpyArgs, `[]`), `"FillType": "Random"`, `"FillType": "BinaryHDF"`, 1),
			[]string{`KernelSpecification.Arguments[1] (x).FillType "BinaryHDF"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeT1(t, map[string]string{"k.T1.json": tt.t1})
			path := filepath.Join(dir, "k.T1.json")
			s, err := Parse(path, []byte(tt.t1))
			if err != nil {
				t.Fatal(err)
			}
			if s.Evaluator != "" || s.OpenCL != nil {
				t.Errorf("evaluator %q: want the T1 listed, not tuned", s.Evaluator)
			}
			for _, w := range tt.want {
				if !strings.Contains(s.Note, w) {
					t.Errorf("Note = %q, want %q", s.Note, w)
				}
			}
			if !strings.Contains(s.Note, "a spec beside the file with t1: k.T1.json") {
				t.Errorf("Note = %q: no hint of the spec beside", s.Note)
			}
		})
	}
}

// A spec beside a wrong T1 file gives what is wrong, and the rest is the
// file's.
func TestOpenCLT1Override(t *testing.T) {
	t.Parallel()
	dir := writeT1(t, map[string]string{"k.T1.json": saxpyT1(hotspotArgs, `["-std=c++11"]`)})
	spec := `name: saxpy-fixed
evaluator: opencl
t1: k.T1.json
opencl:
  options: [-cl-mad-enable]
  args:
    - {name: y, type: float, size: "4096", fill: {constant: 1}, output: true}
    - {name: x, type: float, size: "4096", fill: random}
    - {name: a, type: float, value: "2.5"}
    - {name: n, type: int, value: "4096"}
`
	path := filepath.Join(dir, "fixed.yaml")
	s, err := Parse(path, []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	if s.OpenCL == nil || s.OpenCL.Kernel != "saxpy" || len(s.OpenCL.Params) != 2 || s.OpenCL.Options[0] != "-cl-mad-enable" {
		t.Fatalf("OpenCL = %+v", s.OpenCL)
	}
	if len(s.Problems) != 1 || s.Problems[0].Name != "4096" || len(s.Constraints) != 1 {
		t.Errorf("problems %v constraints %v: want the T1's", s.Problems, s.Constraints)
	}
	// Left without args, the T1's wrong ones are the error, by field.
	noArgs := spec[:strings.Index(spec, "  args:")]
	_, err = Parse(path, []byte(noArgs))
	if err == nil || !strings.Contains(err.Error(), "k.T1.json: KernelSpecification.Arguments[2]: temp_dst is a buffer") {
		t.Errorf("Parse(no args) = %v, want the T1's Arguments named", err)
	}
}

// The public hub's gemm T1, where ../shared/spaces holds it: its kernel
// file is not there, and its options are CUDA's.
func TestOpenCLT1Hub(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "spaces", "kernels", "gemm_milo.T1.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("the hub's gemm T1 is not here (../shared/spaces/kernels): %v", err)
	}
	s, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`KernelSpecification.KernelFile "gemm_milo/common.opencl"`, `"-std=c++11" is not an OpenCL compiler option`} {
		if !strings.Contains(s.Note, w) {
			t.Errorf("Note = %q, want %q", s.Note, w)
		}
	}
}
