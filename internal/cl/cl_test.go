package cl

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
)

// device returns the first OpenCL device, or skips saying why there is none.
func device(t *testing.T) (*Lib, Device) {
	t.Helper()
	l, err := Load()
	if err != nil {
		t.Skipf("no OpenCL here (install ocl-icd-libopencl1 and pocl-opencl-icd): %v", err)
	}
	ps, err := l.Platforms()
	if err != nil {
		t.Skipf("no OpenCL platform here: %v", err)
	}
	for _, p := range ps {
		ds, err := l.Devices(p)
		if err != nil {
			t.Fatalf("Devices(%s): %v", p.Name, err)
		}
		if len(ds) > 0 {
			return l, ds[0]
		}
	}
	t.Skip("OpenCL platforms without devices")
	return nil, Device{}
}

const saxpy = `
__kernel void saxpy(__global float *y, __global const float *x, const float a, const int n) {
	int i = get_global_id(0);
	if (i < n) y[i] = a * x[i] + y[i] * SCALE;
}`

func TestRunSaxpy(t *testing.T) {
	l, d := device(t)
	if d.Name == "" || d.DriverVersion == "" || d.ComputeUnits <= 0 || d.MaxWorkGroup <= 0 {
		t.Fatalf("device %+v: missing properties", d)
	}
	c, err := l.NewContext(d)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	p, err := c.BuildSource(saxpy, "-DSCALE=2.0f")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	k, err := p.Kernel("saxpy")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	const n = 1000
	xs, ys := make([]byte, 4*n), make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(xs[4*i:], math.Float32bits(float32(i)))
		binary.LittleEndian.PutUint32(ys[4*i:], math.Float32bits(1))
	}
	bx, _ := c.NewBuffer(4 * n)
	by, _ := c.NewBuffer(4 * n)
	defer bx.Release()
	defer by.Release()
	if err := bx.Write(xs); err != nil {
		t.Fatal(err)
	}
	if err := by.Write(ys); err != nil {
		t.Fatal(err)
	}
	a := make([]byte, 4)
	binary.LittleEndian.PutUint32(a, math.Float32bits(3))
	nb := make([]byte, 4)
	binary.LittleEndian.PutUint32(nb, n)
	for i, set := range []error{k.SetBuffer(0, by), k.SetBuffer(1, bx), k.SetBytes(2, a), k.SetBytes(3, nb)} {
		if set != nil {
			t.Fatalf("arg %d: %v", i, set)
		}
	}
	ns, err := c.Run(k, []int{1024}, []int{64})
	if err != nil {
		t.Fatal(err)
	}
	if ns <= 0 {
		t.Errorf("Run: %d ns", ns)
	}
	if err := by.Read(ys); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		got := math.Float32frombits(binary.LittleEndian.Uint32(ys[4*i:]))
		if want := 3*float32(i) + 2; got != want {
			t.Fatalf("y[%d] = %v, want %v", i, got, want)
		}
	}
	bin, err := p.Binary()
	if err != nil {
		t.Fatal(err)
	}
	p2, err := c.BuildBinary(bin, "-DSCALE=2.0f")
	if err != nil {
		t.Fatalf("BuildBinary: %v", err)
	}
	p2.Release()
}

func TestBuildErrors(t *testing.T) {
	l, d := device(t)
	c, err := l.NewContext(d)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	_, err = c.BuildSource("__kernel void f(__global float *x) { x[0] = undefined_name; }", "")
	var be *BuildError
	if !errors.As(err, &be) || Code(err) != BuildProgramFailure || !strings.Contains(be.Log, "undefined_name") {
		t.Errorf("BuildSource(bad) = %v, want CL_BUILD_PROGRAM_FAILURE with a log naming undefined_name", err)
	}
	p, err := c.BuildSource(saxpy, "-DSCALE=1")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	if _, err := p.Kernel("nope"); Code(err) != InvalidKernelName {
		t.Errorf("Kernel(nope) = %v, want CL_INVALID_KERNEL_NAME", err)
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := open([]string{"libquasim-no-such-opencl.so.1"})
	if !errors.Is(err, ErrNoOpenCL) || !strings.Contains(err.Error(), "pocl-opencl-icd") {
		t.Errorf("open(missing) = %v, want ErrNoOpenCL with a hint", err)
	}
}
