package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/quasim/quasim/internal/browsertest"
)

// TestReport tunes a builtin kernel and a replayed recording with energy
// on a real quasimd, writes quasimctl report, and opens it in headless
// Chromium: every chart of every job draws its series, the served
// certificates' checks are there, and nothing leaves the file.
func TestReport(t *testing.T) {
	t.Parallel()
	energy, err := filepath.Abs("../../evaluate/replay/testdata/synthetic_energy.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := newDir(t, map[string]string{
		"sgemm.yaml":  "name: sgemm\nevaluator: builtin:sgemm\nproblems: [\"128,128,128\"]\nschedule: \"@every 1h\"\nbudget: {evals: 8}\n",
		"energy.yaml": "name: gemm-energy\nevaluator: replay:" + energy + "\nschedule: \"@every 1h\"\nbudget: {evals: 40}\n",
	})
	d := start(t, dir)
	if out, errs, code := d.ctl("tune", "sgemm", "--budget", "8", "--wait"); code != 0 {
		t.Fatalf("tune: %d %s %s", code, out, errs)
	}
	waitServedKernel(t, d, "sgemm", "128,128,128")
	waitServedKernel(t, d, "gemm-energy", "4096,4096")
	file := filepath.Join(dir, "report.html")
	out, errs, code := d.ctl("report", "-o", file, "--memgraph", "../../memgraph/testdata/hand_landmark_full.json")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, "wrote "+file) {
		t.Errorf("report said %q", out)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"sgemm", "gemm-energy", "Served certificate", "parity", "Pareto front", "certified", "evaluations proposed",
		"Roofline", "No ceilings", // the test daemons run with --no-ceilings
		"Causal influence", "Memory plans", "hand_landmark_full", "planned by quasimd"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(page, "Served certificate"); n != 2 {
		t.Errorf("%d served certificates shown, want 2 (one per job)", n)
	}
	r, wall := browsertest.Open(t, page)
	if len(r.Charts) < 2*4 {
		t.Errorf("%d charts rendered, want at least 4 per job", len(r.Charts))
	}
	t.Logf("report of 2 jobs: %d bytes, %d charts, opened in %v (page ready at %.0f ms)", len(b), len(r.Charts), wall, r.OpenMs)
}

// TestReportImportedCache imports a real Kernel Tuner cache of 17,956
// configs (CLBlast gemm on an RTX 3090) and reports it: the trials come
// page by page with progress, the page holds them all and opens in
// headless Chromium with every chart drawn.
func TestReportImportedCache(t *testing.T) {
	t.Parallel()
	cache := filepath.Join(sharedSpaces(t), "gemm_clblast_RTX_3090.json.gz")
	dir := newDir(t, map[string]string{
		"gemm.yaml": "name: gemm\nevaluator: replay:" + cache + "\nschedule: \"@every 6h\"\nbudget: {evals: 40}\n",
	})
	d := start(t, dir)
	if out, errs, code := d.ctl("import", cache, "--kernel", "gemm"); code != 0 {
		t.Fatalf("import: exit %d: %s %s", code, out, errs)
	}
	file := filepath.Join(dir, "report.html")
	_, errs, code := d.ctl("report", "gemm", "-o", file)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "gemm: 10000 trials fetched, more follow") {
		t.Errorf("no progress on stderr: %q", errs)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<p class="note">(\d+) trials:`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("the report has no trial table")
	}
	if n, _ := strconv.Atoi(m[1]); n != 17956 {
		t.Errorf("the report's job has %d trials, want the cache's 17956", n)
	}
	r, wall := browsertest.Open(t, string(b))
	t.Logf("report of 17,956 trials: %d bytes, %d charts, Chromium ran %v, page ready at %.0f ms", len(b), len(r.Charts), wall, r.OpenMs)
}
