package opencl

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/testload"
)

// TestMain makes the test binary an OpenCL worker when started as one,
// as quasimd is: os.Args[1] is WorkerMode.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == WorkerMode {
		os.Exit(WorkerMain(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// worker is the command that runs this test binary as a worker.
func workerCmd() []string { return []string{os.Args[0], WorkerMode} }

// needDevice skips the test when this machine has no OpenCL device.
func needDevice(t *testing.T) Devices {
	t.Helper()
	d, err := Discover(context.Background(), workerCmd(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Unavailable != "" {
		t.Skipf("no OpenCL device here (install ocl-icd-libopencl1 and pocl-opencl-icd): %s", d.Unavailable)
	}
	return d
}

func scaleKernel(t *testing.T) Kernel {
	src, err := filepath.Abs("testdata/scale.cl")
	if err != nil {
		t.Fatal(err)
	}
	return Kernel{
		Name:    "scale",
		Sources: []string{src},
		Kernel:  "scale",
		Params: []Param{
			{Name: "block_size_x", Values: []any{32, 64, 128, 8192}},
			{Name: "work_per_item", Values: []any{1, 2, 4}},
			{Name: "FAULT", Values: []any{0, 1, 2, 3, 4}},
		},
		ProblemDims: []string{"n"},
		ProblemSize: []string{"n"},
		GridDiv:     [3][]string{{"block_size_x", "work_per_item"}},
		Args: []Arg{
			{Name: "y", Type: "float", Size: "n", Output: true},
			{Name: "x", Type: "float", Size: "n", Fill: Fill{Kind: FillRandom, Seed: 3}},
			{Name: "a", Type: "float", Value: "2.5"},
			{Name: "n", Type: "int", Value: "n"},
		},
		Check: Check{Rel: 1e-6},
	}
}

func TestEvaluateFaults(t *testing.T) {
	needDevice(t)
	k := scaleKernel(t)
	k.CacheDir = t.TempDir()
	ev, err := New(k, Options{Worker: workerCmd(), Timeout: testload.Scale(3 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	p := evaluate.Problem{Dims: []int{10000}, Names: []string{"n"}}
	sp, err := ev.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ev.Device(), "opencl/") {
		t.Errorf("Device() = %q, want an opencl/ class", ev.Device())
	}
	tests := []struct {
		cfg    []int // value indices
		status evaluate.Status
		note   string
	}{
		{[]int{0, 0, 0}, evaluate.StatusOK, ""},
		{[]int{2, 1, 0}, evaluate.StatusOK, ""},
		{[]int{0, 0, 1}, evaluate.StatusWrongResult, "output y differs"},
		{[]int{0, 0, 2}, evaluate.StatusCompile, "FAULT=2"},
		{[]int{3, 0, 0}, evaluate.StatusConstraints, "block_size_x <= "}, // over the device's work-group limit: not in the space
		{[]int{0, 0, 3}, evaluate.StatusTimeout, "no answer"},
		{[]int{1, 0, 0}, evaluate.StatusOK, ""}, // after a restart
		{[]int{0, 0, 4}, evaluate.StatusRuntime, "exited"},
		{[]int{1, 2, 0}, evaluate.StatusOK, ""},
	}
	for _, tt := range tests {
		c := genome.Config(tt.cfg)
		tr, err := ev.Evaluate(context.Background(), c, p)
		if err != nil {
			t.Fatalf("Evaluate(%s): %v", sp.Key(c), err)
		}
		if tr.Status != tt.status || !strings.Contains(tr.Error, tt.note) {
			t.Errorf("Evaluate(%s) = %s %q, want %s with %q", sp.Key(c), tr.Status, tr.Error, tt.status, tt.note)
		}
		if tr.OK() {
			if len(tr.Times) < 3 || tr.Time <= 0 {
				t.Errorf("Evaluate(%s): times %v", sp.Key(c), tr.Times)
			}
			if _, ok := tr.PhasesMS["compilation"]; !ok {
				t.Errorf("Evaluate(%s): phases %v, want compilation", sp.Key(c), tr.PhasesMS)
			}
		}
	}
	bins, _ := filepath.Glob(filepath.Join(k.CacheDir, "*.bin"))
	if len(bins) == 0 {
		t.Errorf("no program binary cached in %s", k.CacheDir)
	}
}

// TestCompileAhead forces compiling ahead on this device (auto leaves it
// off on a CPU): prepared configs are built while others run, and their
// trials pay no compilation.
func TestCompileAhead(t *testing.T) {
	needDevice(t)
	k := scaleKernel(t)
	k.CompileAhead = "on"
	ev, err := New(k, Options{Worker: workerCmd(), Timeout: testload.Scale(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	p := evaluate.Problem{Dims: []int{10000}, Names: []string{"n"}}
	first := genome.Config{0, 0, 0}
	if tr, err := ev.Evaluate(context.Background(), first, p); err != nil || !tr.OK() {
		t.Fatalf("Evaluate(first) = %+v, %v", tr, err)
	}
	next := []genome.Config{{1, 0, 0}, {2, 1, 0}, {1, 2, 0}}
	ev.Prefetch(next, p)
	// The worker compiles them while this one runs.
	if tr, err := ev.Evaluate(context.Background(), genome.Config{0, 1, 0}, p); err != nil || !tr.OK() {
		t.Fatalf("Evaluate = %+v, %v", tr, err)
	}
	var ahead float64
	for _, c := range next {
		tr, err := ev.Evaluate(context.Background(), c, p)
		if err != nil || !tr.OK() {
			t.Fatalf("Evaluate(%v) = %+v, %v", c, tr, err)
		}
		ahead += tr.PhasesMS["compilation"]
	}
	t.Logf("compilation of the 3 prepared configs: %.1f ms in their trials", ahead)
	tr, _ := ev.Evaluate(context.Background(), genome.Config{3, 0, 0}, p) // 8192: over the device's limit
	if tr.Status != evaluate.StatusConstraints {
		t.Errorf("Evaluate(8192) = %s", tr.Status)
	}
}

// A reference that crashes the worker or never returns fails the start,
// saying so, within the prepare timeout.
func TestReferenceFaults(t *testing.T) {
	needDevice(t)
	for _, tt := range []struct {
		fault int
		limit time.Duration // a crash needs no short limit: a loaded machine compiles slowly
		want  string
	}{{4, time.Minute, "signal"}, {3, 2 * time.Second, "did not come within 2s"}} {
		k := scaleKernel(t)
		k.Params[2].Values = []any{tt.fault}
		k.Problems = [][]int{{10000}}
		k.PrepareTimeout = tt.limit
		ev, err := New(k, Options{Worker: workerCmd(), Timeout: testload.Scale(5 * time.Second)})
		if err == nil {
			ev.Close()
			t.Fatalf("New(FAULT=%d) started", tt.fault)
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "preparing problem [10000]") {
			t.Errorf("New(FAULT=%d) = %v, want %q and the problem named", tt.fault, err, tt.want)
		}
	}
}

// TestReferenceKernel checks configs against another kernel's output.
func TestReferenceKernel(t *testing.T) {
	needDevice(t)
	k := scaleKernel(t)
	ref, _ := filepath.Abs("testdata/scale_ref.cl")
	k.Check.ReferenceSources, k.Check.ReferenceKernel = []string{ref}, "scale_ref"
	ev, err := New(k, Options{Worker: workerCmd(), Timeout: testload.Scale(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	p := evaluate.Problem{Dims: []int{10000}, Names: []string{"n"}}
	for _, tt := range []struct {
		cfg  genome.Config
		want evaluate.Status
	}{{genome.Config{1, 2, 0}, evaluate.StatusOK}, {genome.Config{1, 2, 1}, evaluate.StatusWrongResult}} {
		tr, err := ev.Evaluate(context.Background(), tt.cfg, p)
		if err != nil || tr.Status != tt.want {
			t.Errorf("Evaluate(%v) = %s %q, %v; want %s", tt.cfg, tr.Status, tr.Error, err, tt.want)
		}
	}
}

// TestCompileHelpers runs compile helpers on pocl: prepared configs are
// built and launched once in helper processes, which leave them in
// pocl's kernel cache before the worker runs them, and a helper meeting
// a fault (a compile error, a hang, a crash) changes no trial's outcome.
func TestCompileHelpers(t *testing.T) {
	d := needDevice(t)
	if !strings.Contains(d.Devices[0].Platform, "Portable Computing Language") || !helpersWork {
		t.Skipf("compile helpers fill pocl's kernel cache; device %s is not pocl's", d.Devices[0].Name)
	}
	k := scaleKernel(t)
	k.CompileAhead = "process"
	cache := t.TempDir()
	ev, err := New(k, Options{Worker: workerCmd(), Timeout: testload.Scale(5 * time.Second),
		Env: []string{"POCL_CACHE_DIR=" + cache, "POCL_KERNEL_CACHE=1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	p := evaluate.Problem{Dims: []int{10000}, Names: []string{"n"}}
	kernels := func() int { // work-group code pocl generated, one file a config and size
		n := 0
		filepath.WalkDir(cache, func(path string, e os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(path, ".so") {
				n++
			}
			return nil
		})
		return n
	}
	before := kernels() // the reference config's
	ok := []genome.Config{{0, 1, 0}, {1, 0, 0}, {2, 2, 0}, {1, 1, 0}}
	ev.Prefetch(ok, p)
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for kernels() < before+len(ok) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := kernels(); n < before+len(ok) {
		t.Fatalf("pocl's cache holds %d kernels, want %d: the helpers did not build the %d prepared configs", n, before+len(ok), len(ok))
	}
	for _, c := range ok {
		if tr, err := ev.Evaluate(context.Background(), c, p); err != nil || !tr.OK() {
			t.Fatalf("Evaluate(%v) = %+v, %v", c, tr, err)
		}
	}
	tests := []struct {
		cfg    genome.Config
		status evaluate.Status
	}{
		{genome.Config{0, 0, 1}, evaluate.StatusWrongResult},
		{genome.Config{0, 0, 2}, evaluate.StatusCompile},
		{genome.Config{3, 0, 0}, evaluate.StatusConstraints},
		{genome.Config{0, 0, 4}, evaluate.StatusRuntime}, // a helper crashes on it first
		{genome.Config{0, 2, 0}, evaluate.StatusOK},
		{genome.Config{0, 0, 3}, evaluate.StatusTimeout}, // a helper hangs on it first
		{genome.Config{2, 0, 0}, evaluate.StatusOK},
	}
	var all []genome.Config
	for _, tt := range tests {
		all = append(all, tt.cfg)
	}
	ev.Prefetch(all, p)
	for _, tt := range tests {
		tr, err := ev.Evaluate(context.Background(), tt.cfg, p)
		if err != nil || tr.Status != tt.status {
			t.Errorf("Evaluate(%v) = %s %q, %v; want %s", tt.cfg, tr.Status, tr.Error, err, tt.status)
		}
	}
}

// Fresh starts another worker of the same kernel, and evaluate.Confirm measures finalists in such workers: a config
// whose output is wrong there counts as failed and ranks last.
func TestFresh(t *testing.T) {
	needDevice(t)
	k := scaleKernel(t)
	k.Problems = [][]int{{10000}, {20000}}
	ev, err := New(k, Options{Worker: workerCmd(), Timeout: testload.Scale(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	p := evaluate.Problem{Dims: []int{10000}, Names: []string{"n"}}
	sp, err := ev.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	fs := []evaluate.Finalist{
		{Config: genome.Config{0, 0, 1}, Key: sp.Key(genome.Config{0, 0, 1}), TimesMS: []float64{0.001}}, // wrong_result
		{Config: genome.Config{1, 0, 0}, Key: sp.Key(genome.Config{1, 0, 0}), TimesMS: []float64{1}},
	}
	out, err := evaluate.Confirm(context.Background(), ev, p, fs, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Key != fs[1].Key || len(out[0].TimesMS) != 3 || out[0].Failed != 0 || out[1].Failed != 2 {
		t.Fatalf("confirmed %+v; want %s first, measured in both workers, and %s failed in both", out, fs[1].Key, fs[0].Key)
	}
	// A worker of its own: closing it leaves the first one running.
	fresh, done, err := ev.Fresh(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := fresh.Evaluate(context.Background(), fs[1].Config, p); err != nil || !tr.OK() {
		t.Fatalf("fresh worker: %+v, %v", tr, err)
	}
	done()
	if tr, err := ev.Evaluate(context.Background(), fs[1].Config, p); err != nil || !tr.OK() {
		t.Fatalf("the first worker after a fresh one closed: %+v, %v", tr, err)
	}
}
