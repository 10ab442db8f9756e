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
