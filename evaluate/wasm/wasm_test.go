package wasm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/examples/wasm-kernel/matmul"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/testload"
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
	if testing.Short() {
		t.Skip("skipping under -short (CI's race pass): compiling and running matmul under -race takes 30 s; TestFaults races the evaluator's paths on its own module")
	}
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
	// A config's first run is guarded, several times slower: oom fills its
	// 64 MiB in about 200 ms here. The limit is well above that, and below the
	// 61 runs of 50 ms that slow makes.
	// slow spins 50 ms of wall time a run, so its limit stays 2 s; the
	// others' limit is scaled by the machine's load (oom took more than
	// 2 s at a load of 16).
	e := load(t, testWasm, Options{Reps: evaluate.Reps{Min: 60, Max: 60}, Timeout: testload.Scale(2 * time.Second), MemoryLimitMiB: 64})
	eSlow := load(t, testWasm, Options{Reps: evaluate.Reps{Min: 60, Max: 60}, Timeout: 2 * time.Second, MemoryLimitMiB: 64})
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
		{"slow", evaluate.StatusTimeout, "within 2s, not enough"},
		{"invalid", evaluate.StatusInvalid, "cannot run"},
		{"ok", evaluate.StatusOK, ""},
	} {
		ev := e
		if tt.mode == "slow" {
			ev = eSlow
		}
		tr, err := ev.Evaluate(context.Background(), cfg(tt.mode), p)
		if err != nil {
			t.Fatalf("%d %s: %v", i, tt.mode, err)
		}
		if tr.Status != tt.status || !strings.Contains(tr.Error, tt.note) {
			t.Errorf("%d %s: %s %q, want %s with %q", i, tt.mode, tr.Status, tr.Error, tt.status, tt.note)
		}
	}
}

// TestNeverReturns: a run that never returns is a timeout trial once the
// limit has passed, the end of the caller's ctx interrupts it as well, and
// the next config runs on a fresh instance with the right checksum.
func TestNeverReturns(t *testing.T) {
	const limit = 300 * time.Millisecond
	const margin = 30 * time.Second // a loaded machine; a hang fails here instead of at go test's limit
	p := evaluate.Problem{Dims: []int{1}}
	stuck := false
	// try evaluates mode on e, failing the test if Evaluate does not return
	// within limit plus margin (the evaluator is then left open: it is held).
	try := func(e *Evaluator, ctx context.Context, mode string) (evaluate.Trial, error, time.Duration) {
		t.Helper()
		sp, _ := e.Space(p)
		c, err := sp.ParseKey(mode)
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			tr  evaluate.Trial
			err error
		}
		done := make(chan result, 1)
		start := time.Now()
		go func() {
			tr, err := e.Evaluate(ctx, c, p)
			done <- result{tr, err}
		}()
		select {
		case r := <-done:
			return r.tr, r.err, time.Since(start)
		case <-time.After(limit + margin):
			stuck = true
			t.Fatalf("Evaluate(%s) has not returned after %s", mode, limit+margin)
			return evaluate.Trial{}, nil, 0
		}
	}
	open := func(timeout time.Duration) *Evaluator {
		e, err := Load(context.Background(), testWasm, Options{Reps: evaluate.Reps{Min: 3, Max: 3}, Timeout: timeout, MemoryLimitMiB: 64})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if !stuck {
				e.Close()
			}
		})
		return e
	}
	checksum := func(e *Evaluator, mode string, want float64) {
		t.Helper()
		sp, _ := e.Space(p)
		c, _ := sp.ParseKey(mode)
		_, sum, status, note, err := e.measure(context.Background(), sp, c, p, 1, count(3))
		if err != nil || status != evaluate.StatusOK || sum != want {
			t.Errorf("%s after the interrupted run: checksum %v (%s %q %v), want %v", mode, sum, status, note, err, want)
		}
	}

	e := open(limit)
	tr, err, took := try(e, context.Background(), "spin,1")
	if err != nil || tr.Status != evaluate.StatusTimeout || !strings.Contains(tr.Error, "did not return within 300ms") || took < limit {
		t.Errorf("spin: %s %q, %v after %s; want a timeout after at least %s", tr.Status, tr.Error, err, took, limit)
	}
	checksum(e, "ok,2", 2)

	// With a limit of an hour only the caller's ctx can end the run.
	e = open(time.Hour)
	if tr, err, _ := try(e, context.Background(), "ok,1"); err != nil || !tr.OK() { // instantiated before the timer starts
		t.Fatalf("ok: %+v, %v", tr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(200*time.Millisecond, cancel)
	defer timer.Stop()
	if _, err, took := try(e, ctx, "spin,2"); !errors.Is(err, context.Canceled) {
		t.Errorf("spin with its ctx cancelled: %v after %s, want %v", err, took, context.Canceled)
	}
	checksum(e, "ok,2", 2)
	checksum(e, "ok,1", 1)
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
// native, as wasm under wazero (the time of quasim_run alone) and as the
// guarded first run of a config.
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
	// A config's first run on a problem, under the guarded runtime, set-up
	// included.
	b.Run("wasm-guarded", func(b *testing.B) {
		e := load(b, matmulWasm, Options{})
		p := evaluate.Problem{Dims: []int{n}}
		sp, _ := e.Space(p)
		c, _ := sp.ParseKey("32,32,32,1")
		in := inputs(sp, c, p)
		for b.Loop() {
			if status, note, err := e.prove(context.Background(), in, sp.Len(), len(p.Dims)); err != nil || status != evaluate.StatusOK {
				b.Fatal(status, note, err)
			}
		}
	})
}
