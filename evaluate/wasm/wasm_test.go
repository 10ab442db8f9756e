package wasm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/examples/wasm-kernel/matmul"
	"github.com/quasim/quasim/genome"
)

var matmulWasm, testWasm string

// TestMain builds the example kernel and the test kernel with
// GOOS=wasip1 GOARCH=wasm -buildmode=c-shared.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasmkernels")
	if err != nil {
		panic(err)
	}
	matmulWasm, testWasm = filepath.Join(dir, "matmul.wasm"), filepath.Join(dir, "test.wasm")
	for _, b := range [][2]string{{matmulWasm, "../../examples/wasm-kernel"}, {testWasm, "./testdata/testkernel"}} {
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", b[0], b[1])
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if out, err := cmd.CombinedOutput(); err != nil {
			panic(string(out))
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func load(t testing.TB, path string, opt Options) *Evaluator {
	t.Helper()
	e, err := Load(context.Background(), path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestMatmulKernel(t *testing.T) {
	e := load(t, matmulWasm, Options{Reps: evaluate.Reps{Min: 3, Max: 3}})
	p := evaluate.Problem{Dims: []int{64}}
	sp, err := e.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Len() != 4 || e.Device() != "wasm/wazero" {
		t.Fatalf("space of %d params, device %s", sp.Len(), e.Device())
	}
	c, err := sp.ParseKey("32,16,8,1")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := e.Evaluate(context.Background(), c, p)
	if err != nil || !tr.OK() || len(tr.Times) != 3 || tr.Time <= 0 {
		t.Fatalf("Evaluate = %+v, %v", tr, err)
	}
	// By default runs repeat until the median is stable, within the caps.
	d := load(t, matmulWasm, Options{Reps: evaluate.Reps{Max: 9}})
	tr, err = d.Evaluate(context.Background(), c, p)
	if err != nil || !tr.OK() || len(tr.Times) < 3 || len(tr.Times) > 9 {
		t.Fatalf("Evaluate with Reps{Max: 9} = %+v, %v", tr, err)
	}
	rep, err := e.Verify(context.Background(), c, p, evaluate.VerifySettings{})
	if err != nil || !rep.Passed() {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
	// The same code natively gives the same checksum, bit for bit.
	a, b := matmul.Inputs(64)
	out := make([]float32, 64*64)
	matmul.Multiply(64, a, b, out, 32, 16, 8, true)
	_, sum, status, note, err := e.measure(context.Background(), sp, c, p, 0, count(1))
	if err != nil || status != evaluate.StatusOK || sum != matmul.Checksum(out) {
		t.Errorf("wasm checksum %v (%s %s %v), native %v", sum, status, note, err, matmul.Checksum(out))
	}
}

func TestFaults(t *testing.T) {
	e := load(t, testWasm, Options{Reps: evaluate.Reps{Min: 3, Max: 3}, Timeout: 70 * time.Millisecond, MemoryLimitMiB: 64})
	p := evaluate.Problem{Dims: []int{1}}
	sp, _ := e.Space(p)
	cfg := func(mode string) genome.Config {
		c, err := sp.ParseKey(mode + ",1")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for i, tt := range []struct {
		mode   string
		status evaluate.Status
		note   string
	}{
		{"ok", evaluate.StatusOK, ""},
		{"panic", evaluate.StatusRuntime, "instance discarded"},
		{"ok", evaluate.StatusOK, ""},
		{"oom", evaluate.StatusRuntime, "instance discarded"},
		{"ok", evaluate.StatusOK, ""},
		{"slow", evaluate.StatusTimeout, "within 70ms, not enough"},
		{"invalid", evaluate.StatusInvalid, "cannot run"},
		{"ok", evaluate.StatusOK, ""},
	} {
		tr, err := e.Evaluate(context.Background(), cfg(tt.mode), p)
		if err != nil {
			t.Fatalf("%d %s: %v", i, tt.mode, err)
		}
		if tr.Status != tt.status || !strings.Contains(tr.Error, tt.note) {
			t.Errorf("%d %s: %s %q, want %s with %q", i, tt.mode, tr.Status, tr.Error, tt.status, tt.note)
		}
	}
}

func TestBadModules(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.wasm")
	os.WriteFile(bad, []byte("not wasm"), 0o644)
	for _, path := range []string{bad, filepath.Join(t.TempDir(), "missing.wasm")} {
		if _, err := Load(context.Background(), path, Options{}); err == nil || !strings.Contains(err.Error(), filepath.Base(path)) {
			t.Errorf("Load(%s) = %v, want an error naming it", path, err)
		}
	}
}

// BenchmarkMatmul compares one 128x128 multiply, blocks 32,32,32 i-k-j,
// native and as wasm under wazero (the time of quasim_run alone).
func BenchmarkMatmul(b *testing.B) {
	const n = 128
	b.Run("native", func(b *testing.B) {
		x, y := matmul.Inputs(n)
		out := make([]float32, n*n)
		for b.Loop() {
			matmul.Multiply(n, x, y, out, 32, 32, 32, true)
		}
	})
	b.Run("wasm", func(b *testing.B) {
		e := load(b, matmulWasm, Options{Reps: evaluate.Reps{Warmup: -1, Min: 1, Max: 1}})
		p := evaluate.Problem{Dims: []int{n}}
		sp, _ := e.Space(p)
		c, _ := sp.ParseKey("32,32,32,1")
		e.Evaluate(context.Background(), c, p) // set up the inputs once
		var total float64
		runs := 0
		for b.Loop() {
			tr, err := e.Evaluate(context.Background(), c, p)
			if err != nil || !tr.OK() {
				b.Fatal(tr, err)
			}
			total += tr.Time
			runs++
		}
		b.ReportMetric(total/float64(runs)*1e6, "run-ns/op")
	})
}
