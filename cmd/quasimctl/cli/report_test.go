package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
)

// A kernel with more trials than a page is fetched page by page, with
// progress on stderr, and every trial reaches the page.
func TestReportPages(t *testing.T) {
	t.Parallel()
	n := api.MaxTrialsLimit + 1
	f := newFakeDaemon(t, func(f *fakeDaemon) {
		var ts []api.Trial
		for i := range n {
			ts = append(ts, api.Trial{Key: fmt.Sprintf("%d,True,tiled", i), Status: "ok", TimeMS: 1 + float64(i%97), At: fakeT0, Problem: "256,256,256", Device: "cpu/test", Cycle: 3})
		}
		f.trials["sgemm"] = ts
	})
	file := filepath.Join(t.TempDir(), "r.html")
	out, errs, code := f.ctl(t, "report", "sgemm", "-o", file)
	if code != 0 {
		t.Fatalf("report = %d (stderr %q)", code, errs)
	}
	mustContain(t, "stderr", errs, fmt.Sprintf("sgemm: %d trials fetched, more follow\n", api.MaxTrialsLimit), fmt.Sprintf("sgemm: %d trials fetched, done\n", n))
	mustContain(t, "stdout", out, "wrote "+file, "1 kernels, 10001 trials")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "page", string(b), "10001 trials:", `<svg class="chart"`, "served 16,True,tiled")
	out, _, code = f.ctl(t, "report", "sgemm", "-o", file, "--json")
	if got := decodeStrict[reportSummary](t, out); code != 0 || got != (reportSummary{File: file, Bytes: len(b), Kernels: 1, Trials: n}) {
		t.Errorf("report --json = %d %+v", code, got)
	}
	if strings.Contains(string(b), "conv2d") || strings.Contains(string(b), `id="job-3"`) {
		t.Error("the page reports kernels not asked for")
	}
}

func TestReportUnknownKernel(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	file := filepath.Join(t.TempDir(), "r.html")
	_, errs, code := f.ctl(t, "report", "sgemm", "nosuch", "-o", file)
	if code != exitNotFound || !strings.Contains(errs, `kernel "nosuch"`) {
		t.Errorf("report nosuch = %d %q, want %d naming the kernel", code, errs, exitNotFound)
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("a failed report wrote its file")
	}
}

// report --memgraph takes --dim for an ONNX graph's symbolic dims, as
// memgraph plan does.
func TestReportMemgraphDims(t *testing.T) {
	t.Parallel()
	// x [n, 4] float -> Relu -> y [n, 4] (TestMemgraphPlanONNXDims's).
	const tiny = ":@\n\x12\n\x01x\x12\x01y\x1a\x04relu\"\x04ReluZ\x14\n\x01x\x12\x0f\n\r\b\x01\x12\t\n\x03\x12\x01n\n\x02\b\x04b\x14\n\x01y\x12\x0f\n\r\b\x01\x12\t\n\x03\x12\x01n\n\x02\b\x04"
	dir := t.TempDir()
	model, file := filepath.Join(dir, "tiny.onnx"), filepath.Join(dir, "r.html")
	if err := os.WriteFile(model, []byte(tiny), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFakeDaemon(t)
	if _, errs, code := f.ctl(t, "report", "sgemm", "--memgraph", model, "-o", file); code == 0 || !strings.Contains(errs, `"n"`) {
		t.Errorf("report --memgraph without --dim = %d %q, want an error naming dim n", code, errs)
	}
	// With n=5 the graph reads; what fails then is the fake daemon, which
	// plans no memory (404).
	if _, errs, code := f.ctl(t, "report", "sgemm", "--memgraph", model, "--dim", "n=5", "-o", file); strings.Contains(errs, `"n"`) || !strings.Contains(errs, "404") {
		t.Errorf("report --memgraph --dim n=5 = %d %q, want the graph read and the fake daemon's 404", code, errs)
	}
	if _, errs, code := f.ctl(t, "report", "sgemm", "--memgraph", model, "--dim", "n", "-o", file); code != exitUsage || !strings.Contains(errs, `dim "n": want NAME=VALUE`) {
		t.Errorf("bad --dim: exit %d, stderr %q", code, errs)
	}
}
