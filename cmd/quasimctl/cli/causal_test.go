package cli

import (
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/causal"
)

var chromeFixture = filepath.Join("..", "..", "..", "causal", "testdata", "pytorch_profiler.json")

// offlineImport is what causal import --offline --json prints.
type offlineImport struct {
	Import api.ImportReport `json:"import"`
	End    string           `json:"end"`
	Causal api.Causal       `json:"causal"`
}

// TestCausalImportOffline profiles a trace with no daemon: the mapped and
// dropped report, then the table (figures from causal's chrome_test).
func TestCausalImportOffline(t *testing.T) {
	t.Parallel()
	out, errs, code := run(t, "causal", "import", "--offline", "--curves", "--socket", "/nonexistent/sock", chromeFixture)
	if code != 0 {
		t.Fatalf("causal import --offline = %d, stderr %q", code, errs)
	}
	mustContain(t, "causal import --offline", out,
		"pytorch_profiler.json: 42 events read; mapped 17 spans, 8 dependencies (1 from GPU waits), 2 iterations (ProfilerStep#N)\n",
		"  1      flow without end                                                         event 35 \"ac2g\"\n",
		"GPU work in steps: 6 events by their launch's correlation id (0 of them kernels of a CUDA graph launch), 0 by when they ran on their stream (no launch in the trace), 0 in no step\n",
		// Step 1's GPU work ends at 151 µs, the step at 300; step 2's at 461 and 600.
		"steps: 2, median period 300µs (a step's start to the next's; the last to its last GPU op); 2 host-paced (their GPU work ended a median 144µs before the step did: "+
			"the host ends them, so their last GPU ops have that much slack; --end gpu measures to those ops)\n",
		"pipeline trace: 2 iterations, 17 spans (1 batch); end to end 300µs [300µs, 300µs]\n",
		"sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32         35.0% [33.3%, 36.7%]  18.3% [0.0%, 36.7%]  0.183 [0.000, 0.367]  74.5µs [0s, 149µs]     unknown        -\n",
		"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<flo…  6.7% [6.7%, 6.7%]     0.0% [0.0%, 0.0%]    0.000 [0.000, 0.000]  115.5µs [46µs, 185µs]  unknown        -\n",
		"KERNEL                                                            0%    5%    10%   15%   20%",
		"offline, gains at tuned times are unknown",
	)

	out, errs, code = run(t, "causal", "import", "--offline", "--json", "--pipeline", "fwd", chromeFixture)
	if code != 0 {
		t.Fatalf("causal import --offline --json = %d, stderr %q", code, errs)
	}
	got := decodeStrict[offlineImport](t, out)
	if got.End != "step" || got.Import.Spans != 17 || got.Import.Iterations != 2 || len(got.Import.Dropped) != 6 || got.Import.Bind.ByLaunch != 6 || len(got.Import.Steps) != 2 ||
		got.Causal.Pipeline != "fwd" || got.Causal.Iterations != 2 || len(got.Causal.Kernels) != 5 || len(got.Causal.Kernels[0].Curve) != causal.CurveSteps {
		t.Errorf("causal import --offline --json = %+v", got)
	}
}

// TestCausalImportGPUEnd: --end gpu measures each step of the fixture
// to its last GPU op (151 and 161 µs after the step's start), where the
// host ends the steps 144 µs later: the GEMM whose chain ends each step's
// GPU work is on that path in both steps, as it is not to the step's end.
func TestCausalImportGPUEnd(t *testing.T) {
	t.Parallel()
	out, errs, code := run(t, "causal", "import", "--offline", "--end", "gpu", chromeFixture)
	if code != 0 {
		t.Fatalf("causal import --offline --end gpu = %d, stderr %q", code, errs)
	}
	mustContain(t, "causal import --offline --end gpu", out,
		"end to end: each step's start to its last GPU op (--end gpu; the GPU work a step launched is its own wherever it ran), in 2 of 2 iterations\n",
		"pipeline trace: 2 iterations, 17 spans (1 batch); end to end 156µs [151µs, 161µs]\n",
		// To the step's end: 18.3% on the path, 0.183, 74.5µs of slack.
		"sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32         67.3% [66.2%, 68.3%]  67.3% [66.2%, 68.3%]  0.673 [0.662, 0.683]  0s [0s, 0s]        unknown        -\n",
	)
	out, errs, code = run(t, "causal", "import", "--offline", "--end", "gpu", "--json", chromeFixture)
	if code != 0 {
		t.Fatalf("causal import --offline --end gpu --json = %d, stderr %q", code, errs)
	}
	got := decodeStrict[offlineImport](t, out)
	if got.End != "gpu" || got.Causal.EndToEnd.Max >= 300e3 {
		t.Errorf("end %q, end to end %+v: want gpu, under the 300 µs period", got.End, got.Causal.EndToEnd)
	}
	// Work queued in a step without its launch in the trace (causal's TestImportLaunchOrder).
	order := filepath.Join("..", "..", "..", "causal", "testdata", "gpu_order_synthetic.json")
	out, errs, code = run(t, "causal", "import", "--offline", "--end", "gpu", order)
	if code != 0 {
		t.Fatalf("causal import --offline --end gpu = %d, stderr %q", code, errs)
	}
	mustContain(t, "causal import --offline --end gpu (order)", out,
		"GPU work in steps: 3 events by their launch's correlation id (0 of them kernels of a CUDA graph launch), 2 by their correlation id's place between two launches of one step "+
			"(no launch in the trace), 1 by when they ran on their stream (no launch in the trace), 0 in no step\n")
}

// TestCausalImportForkJoin: issue 27's fork-join trace, without
// ProfilerStep#N markers (synthetic: causal/causaltest), imports as its 50
// iterations with each kernel's influence per iteration.
func TestCausalImportForkJoin(t *testing.T) {
	t.Parallel()
	trace := filepath.Join("..", "..", "..", "causal", "testdata", "forkjoin_synthetic.json")
	out, errs, code := run(t, "causal", "import", "--offline", "--socket", "/nonexistent/sock", trace)
	if code != 0 {
		t.Fatalf("causal import --offline = %d, stderr %q", code, errs)
	}
	mustContain(t, "causal import --offline", out,
		"forkjoin_synthetic.json: 750 events read; mapped 350 spans, 300 dependencies (50 from GPU waits), 50 iterations (no ProfilerStep#N: inferred, the kernel sequence repeats on 3 of 3 streams and threads)\n",
		"pipeline trace: 50 iterations, 350 spans (1 batch); end to end 1.509ms [1.509ms, 1.509ms]\n",
		"A                      66.3% [66.3%, 66.3%]  66.3% [66.3%, 66.3%]  0.663 [0.663, 0.663]",
		"C                      33.1% [33.1%, 33.1%]  33.1% [33.1%, 33.1%]  0.331 [0.331, 0.331]",
		"B                      19.9% [19.9%, 19.9%]  0.0% [0.0%, 0.0%]     0.000 [0.000, 0.000]  694µs [694µs, 694µs]",
	)
	out, errs, code = run(t, "causal", "import", "--offline", "--json", trace)
	if code != 0 {
		t.Fatalf("causal import --offline --json = %d, stderr %q", code, errs)
	}
	got := decodeStrict[offlineImport](t, out)
	if im := got.Import; im.IterationsFrom != causal.FromRepeats || im.Iterations != 50 || im.Tracks != 3 || im.RepeatingTracks != 3 || im.Warning != "" {
		t.Errorf("import report %+v", im)
	}
	for _, k := range got.Causal.Kernels {
		if k.Kernel == "B" && (k.Slack.Median != 694e3 || k.Slack.N != 50) {
			t.Errorf("slack of B %+v, want 694 µs over 50 iterations", k.Slack)
		}
	}
}

func TestCausalImportErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no pipeline", []string{"causal", "import", chromeFixture}, exitUsage, "--pipeline is needed to post spans (or use --offline)"},
		{"no file", []string{"causal", "import", "--offline", "/nonexistent/trace.json"}, exitUsage, "open /nonexistent/trace.json: no such file or directory"},
		{"not a trace", []string{"causal", "import", "--offline", filepath.Join("..", "..", "..", "go.mod")}, exitUsage, "invalid chrome trace"},
		{"no daemon", []string{"causal", "import", "--pipeline", "p", "--socket", "/nonexistent/sock", chromeFixture}, exitUnavailable, "cannot reach quasimd"},
		{"show needs a name", []string{"causal", "show"}, exitUsage, "PIPELINE"},
		{"end gpu posts nothing", []string{"causal", "import", "--pipeline", "p", "--end", "gpu", chromeFixture}, exitUsage, "--end gpu needs --offline"},
		{"bad end", []string{"causal", "import", "--offline", "--end", "host", chromeFixture}, exitUsage, `--end "host": want step`},
		{"end gpu without GPU work", []string{"causal", "import", "--offline", "--end", "gpu", filepath.Join("..", "..", "..", "causal", "testdata", "torch_cpu_trace.json")},
			exitUsage, "--end gpu: the trace has no GPU work"},
	}
	for _, tt := range tests {
		_, errs, code := run(t, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.want) {
			t.Errorf("%s: quasimctl %v = %d %q, want %d and %q", tt.name, tt.args, code, errs, tt.code, tt.want)
		}
	}
}

// TestChunks: batches end at iteration boundaries, hold at most n spans
// unless one iteration is larger, and keep only dependencies inside them.
func TestChunks(t *testing.T) {
	t.Parallel()
	var spans []causal.Span
	id := uint64(0)
	for it, n := range []int{3, 3, 5, 1, 2} {
		for range n {
			id++
			s := causal.Span{ID: id, Iteration: it}
			if id > 1 {
				s.Deps = []uint64{id - 1}
			}
			spans = append(spans, s)
		}
	}
	var got []string
	for _, b := range chunks(spans, 4) {
		var parts []string
		for _, s := range b {
			parts = append(parts, fmt.Sprintf("%d%v", s.ID, s.Deps))
		}
		got = append(got, strings.Join(parts, " "))
	}
	want := []string{"1[] 2[1] 3[2]", "4[] 5[4] 6[5]", "7[] 8[7] 9[8] 10[9] 11[10]", "12[] 13[12] 14[13]"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("chunks =\n%s\nwant\n%s", strings.Join(got, " | "), strings.Join(want, " | "))
	}
}

// TestCausalImportTorchTrace imports a real PyTorch profiler recording
// (causal/testdata/README.md says how it was made) and shows its table.
func TestCausalImportTorchTrace(t *testing.T) {
	t.Parallel()
	trace := filepath.Join("..", "..", "..", "causal", "testdata", "torch_cpu_trace.json")
	out, errs, code := run(t, "causal", "import", "--offline", trace)
	if code != 0 {
		t.Fatalf("causal import --offline = %d, stderr %q", code, errs)
	}
	t.Logf("quasimctl causal import --offline %s\n%s", trace, out)
	mustContain(t, "causal import --offline (torch)", out,
		"torch_cpu_trace.json: 280 events read; mapped 163 spans, 0 dependencies (0 from GPU waits), 5 iterations (ProfilerStep#N)\n",
		"steps: 5, median period 2.763ms (a step's start to the next's; the last to its last GPU op)\n",
		"  116    encloses other events on its thread (they are kept)  event 0 \"aten::zeros\"\n",
		"  2      outside every ProfilerStep#N                         event 1 \"aten::empty\"\n",
		"pipeline trace: 5 iterations, 163 spans (1 batch); end to end 2.763ms [305µs, 8.763ms]\n",
		"KERNEL               SHARE                 CRITICAL PATH         INFLUENCE             SLACK                GAIN IF TUNED  MEASURED\n",
		"forward              97.0% [97.0%, 97.0%]  97.0% [97.0%, 97.0%]  0.590 [0.590, 0.590]  0s [0s, 0s]          unknown        -\n",
	)
}

// TestPrintCausalStages: a kernel two stages run is a row per problem.
func TestPrintCausalStages(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	c := api.Causal{Pipeline: "builtin", Iterations: 1, Kernels: []api.CausalKernel{
		{Kernel: "conv2d", Problem: "512,512,7", Share: api.Estimate{Median: 0.858}, Slack: api.Estimate{}},
		{Kernel: "conv2d", Problem: "256,256,5", Share: api.Estimate{Median: 0.2}, Slack: api.Estimate{Median: 168e6, Lo: 112e6, Hi: 184e6, Min: 100e6, Max: 190e6}},
	}}
	if err := printCausal(&b, c, false); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "printCausal", b.String(),
		"conv2d @ 512,512,7  85.8% [0.0%, 0.0%]",
		"conv2d @ 256,256,5  20.0% [0.0%, 0.0%]",
		"168ms [112ms, 184ms] (100ms to 190ms)",
	)
}

// A virtual speedup is shown as Coz reads it: the stage made faster, and
// the pauses it took.
func TestPrintExperimentSpeedup(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	ex := api.Experiment{Pipeline: "builtin", Runs: 2, Results: []api.ExperimentResult{
		{Perturbation: api.Perturbation{Stage: "conv_big", Speedup: 0.2}, PausedMS: 6.63, OnPath: 1, BaseMS: 37,
			Predicted: api.Estimate{Median: -18}, Measured: api.Estimate{Median: -18.5}},
	}}
	if err := printExperiment(&b, ex); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "printExperiment", b.String(), "conv_big 20% faster (virtual, 6.63ms paused)", "-18.0", "-18.5")
}

// TestCausalImportStreams: import reads a trace as it goes: 64 MB of
// gzipped trace text (64 events, each with 1 MB of an argument the
// importer does not keep) never lie in memory at once. Not parallel: it
// reads the heap.
func TestCausalImportStreams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "padded.json.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	fmt.Fprint(zw, `{"traceEvents": [`)
	pad := strings.Repeat("x", 1<<20)
	for k := range 64 {
		if k > 0 {
			fmt.Fprint(zw, ",")
		}
		fmt.Fprintf(zw, `{"ph": "X", "name": "k", "pid": 1, "tid": 1, "ts": %d, "dur": 1, "args": {"pad": "%s"}}`, 10*k, pad)
	}
	fmt.Fprint(zw, "]}")
	if err := errors.Join(zw.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
	pad = ""
	runtime.GC()
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var most uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			most = max(most, m.HeapAlloc)
			select {
			case <-done:
				peak <- most
				return
			case <-tick.C:
			}
		}
	}()
	out, errs, code := run(t, "causal", "import", "--offline", path)
	close(done)
	most := <-peak
	if code != 0 || !strings.Contains(out, "64 events read; mapped 64 spans") {
		t.Fatalf("causal import = %d, stdout %q, stderr %q", code, out, errs)
	}
	if most > 32<<20 {
		t.Errorf("heap reached %d MB importing 64 MB of trace: the text is held", most>>20)
	}
}
