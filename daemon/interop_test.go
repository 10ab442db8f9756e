package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/store"
)

// A FAIR T1 kernel whose default violates its constraints: the daemon
// serves the nearest valid config and says so in /v1/kernels; a float
// parameter comes back a float (2.0), not the integer 2.
func TestT1DefaultAndFloats(t *testing.T) {
	dir := t.TempDir()
	t1 := `{"General": {"BenchmarkName": "tiny"}, "ConfigurationSpace": {"TuningParameters": [
		{"Name": "bx", "Type": "int", "Values": "[16, 32, 64]", "Default": 64},
		{"Name": "f", "Type": "float", "Values": "[1.0, 2.0, 2.5]", "Default": 2.0}],
		"Conditions": [{"Expression": "bx * f <= 100", "Parameters": ["bx", "f"]}]},
		"KernelSpecification": {"ProblemSize": [1024]}}`
	if err := os.WriteFile(filepath.Join(dir, "tiny.T1.json"), []byte(t1), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, dir)
	code, body := ts.get(t, "/v1/configs/tiny", nil)
	if code != 200 {
		t.Fatalf("GET /v1/configs/tiny = %d %s", code, body)
	}
	if !strings.Contains(string(body), `"f":2.0`) {
		t.Errorf("config answer %s: want the float f as 2.0", body)
	}
	var c api.Config
	if err := json.Unmarshal(body, &c); err != nil || c.Key != "32,2.0" || c.Match != api.MatchDefault {
		t.Errorf("config answer %+v (%v), want the default replaced by the nearest valid 32,2.0", c, err)
	}
	code, body = ts.get(t, "/v1/kernels", nil)
	var ks []api.Kernel
	if err := json.Unmarshal(body, &ks); code != 200 || err != nil || len(ks) != 1 {
		t.Fatalf("GET /v1/kernels = %d %s", code, body)
	}
	if n := ks[0].Notes; len(n) != 1 || !strings.Contains(n[0], "the default 64,2.0 is not a valid config") || !strings.Contains(n[0], "32,2.0") {
		t.Errorf("kernel notes %q, want one saying the default 64,2.0 was replaced by 32,2.0", n)
	}
}

// Trials stored for another device class (what an import of a GPU cache
// into a CPU kernel stores) are listed as a foreign job: in kernels,
// trials and status, never among the jobs a tune request starts.
func TestForeignJobsListed(t *testing.T) {
	ts := newTestServer(t, t.TempDir())
	k, ok := ts.sched.kernel("sgemm")
	if !ok {
		t.Fatal("no builtin sgemm")
	}
	own := k.jobs[0]
	key := own.key
	key.Device = "nvidia/NVIDIA A100-PCIE-40GB"
	trial := store.Trial{Key: own.spec.Space.Key(own.spec.Default), Status: "ok", TimeMS: 1.5, At: time.Now()}
	if n, err := ts.st.AddTrials(key, []store.Trial{trial}); err != nil || n != 1 {
		t.Fatalf("AddTrials = %d, %v", n, err)
	}
	var ks []api.Kernel
	_, body := ts.get(t, "/v1/kernels", nil)
	if err := json.Unmarshal(body, &ks); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, kk := range ks {
		for _, j := range kk.Jobs {
			if j.Foreign {
				found++
				if kk.Name != "sgemm" || j.Device != key.Device || j.Trials != 1 || j.NextCycle != nil {
					t.Errorf("foreign job %+v of %s", j, kk.Name)
				}
			}
		}
	}
	if found != 1 {
		t.Errorf("%d foreign jobs listed, want 1", found)
	}
	var tr api.Trials
	_, body = ts.get(t, "/v1/kernels/sgemm/trials?problem="+key.Problem, nil)
	if err := json.Unmarshal(body, &tr); err != nil || len(tr.Trials) != 1 || tr.Trials[0].Device != key.Device {
		t.Errorf("trials = %s", body)
	}
	var st api.Status
	_, body = ts.get(t, "/v1/status", nil)
	if err := json.Unmarshal(body, &st); err != nil || st.Trials != 1 {
		t.Errorf("status = %s", body)
	}
	// A tune request starts the kernel's own jobs only.
	if _, jobs, err := ts.srv.jobsOf("sgemm", key.Problem); err != nil || len(jobs) != 1 || jobs[0].foreign {
		t.Errorf("jobsOf for tuning = %v, %v", jobs, err)
	}
}

// A T1 kernel of 2.1 billion valid configs (4.1e9 combinations): the
// daemon lists it with its exact count and serves the nearest valid config
// to its invalid default, without listing the space (before the count,
// /v1/kernels enumerated every config and ran out of memory).
func TestT1LargeSpace(t *testing.T) {
	dir := t.TempDir()
	var params []string
	for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
		def := 1
		if name == "a" {
			def = 40
		}
		params = append(params, `{"Name": "`+name+`", "Type": "int", "Values": "list(range(1, 41))", "Default": `+strconv.Itoa(def)+`}`)
	}
	t1 := `{"General": {"BenchmarkName": "wide"}, "ConfigurationSpace": {"TuningParameters": [` + strings.Join(params, ",") + `],
		"Conditions": [{"Expression": "a <= b", "Parameters": ["a", "b"]}]},
		"KernelSpecification": {"ProblemSize": [1024]}}`
	if err := os.WriteFile(filepath.Join(dir, "wide.T1.json"), []byte(t1), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, dir)
	code, body := ts.get(t, "/v1/kernels", nil)
	var ks []api.Kernel
	if err := json.Unmarshal(body, &ks); code != 200 || err != nil || len(ks) != 1 {
		t.Fatalf("GET /v1/kernels = %d %s", code, body)
	}
	// a <= b: 40·41/2 pairs, times 40 values for each of the other four.
	if want := 820 * 40 * 40 * 40 * 40; ks[0].Configs != want {
		t.Errorf("configs = %d, want %d", ks[0].Configs, want)
	}
	var c api.Config
	code, body = ts.get(t, "/v1/configs/wide", nil)
	if err := json.Unmarshal(body, &c); code != 200 || err != nil || c.Match != api.MatchDefault {
		t.Fatalf("GET /v1/configs/wide = %d %s", code, body)
	}
	var a, b int
	if _, err := fmt.Sscanf(c.Key, "%d,%d,", &a, &b); err != nil || a != b || !strings.HasSuffix(c.Key, ",1,1,1,1") {
		t.Errorf("default served %q: want a nearest valid one to 40,1,1,1,1,1 (a = b)", c.Key)
	}
}
