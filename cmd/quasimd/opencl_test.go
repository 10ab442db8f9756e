package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/testload"
)

// needOpenCL skips a test on a machine whose OpenCL worker finds no
// device, saying why.
func needOpenCL(t *testing.T) {
	t.Helper()
	qd, _ := binaries(t)
	out, err := exec.Command(qd, "opencl-worker", "--list").Output()
	if err != nil {
		t.Fatalf("quasimd opencl-worker --list: %v", err)
	}
	var d struct {
		Devices     []json.RawMessage `json:"devices"`
		Unavailable string            `json:"unavailable"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("quasimd opencl-worker --list: %v: %s", err, out)
	}
	if len(d.Devices) == 0 {
		t.Skipf("no OpenCL device here (.ci/run installs ocl-icd-libopencl1 and pocl-opencl-icd): %s", d.Unavailable)
	}
}

// scaleSpecs are two specs of evaluate/opencl's test kernel: one whose
// configs all compute the right answer, and one whose FAULT parameter
// adds each fault the worker must survive (a wrong result, a compile
// error, a kernel that never returns, a write through a null pointer)
// beside a work-group too large for any device (left out of the space).
const scaleSpec = `name: scale
evaluator: opencl
problem_dims: [n]
problems: ["100000"]
schedule: "@every 1h"
budget: {evals: 6}
opencl:
  source: scale.cl
  kernel: scale
  tune_params:
    block_size_x: [32, 64, 128, 256]
    work_per_item: [1, 2, 4]
    FAULT: [0]
  problem_size: [n]
  grid_div_x: [block_size_x, work_per_item]
  args:
    - {name: y, type: float, size: n, output: true}
    - {name: x, type: float, size: n, fill: random, seed: 1}
    - {name: a, type: float, value: "2.5"}
    - {name: n, type: int, value: n}
  check:
    tolerance: {rel: 1e-6}
`

const faultySpec = `name: faulty
evaluator: opencl
problem_dims: [n]
problems: ["100000"]
schedule: "@every 1h"
budget: {evals: 10}
# Preparing the reference (build, first launch) must fit too: under CI's
# load 3 s did not.
timeout: 8s
opencl:
  source: scale.cl
  kernel: scale
  tune_params:
    block_size_x: [32, 8192]
    work_per_item: [1]
    FAULT: [0, 1, 2, 3, 4]
  problem_size: [n]
  grid_div_x: [block_size_x, work_per_item]
  args:
    - {name: y, type: float, size: n, output: true}
    - {name: x, type: float, size: n, fill: random, seed: 1}
    - {name: a, type: float, value: "2.5"}
    - {name: n, type: int, value: n}
`

func openclDir(t *testing.T) string {
	// A hang is found by the spec's timeout; a loaded machine builds and
	// prepares more slowly, so it is scaled.
	faulty := strings.Replace(faultySpec, "timeout: 8s", fmt.Sprintf("timeout: %ds", int(testload.Scale(8*time.Second).Seconds())), 1)
	dir := newDir(t, map[string]string{"scale.yaml": scaleSpec, "faulty.yaml": faulty})
	src, err := os.ReadFile("../../evaluate/opencl/testdata/scale.cl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kernels.d", "scale.cl"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestOpenCLEndToEnd(t *testing.T) {
	t.Parallel()
	needOpenCL(t)
	d := start(t, openclDir(t))
	var devs api.Devices
	d.ctlJSON(&devs, "devices")
	if len(devs.OpenCL.Devices) == 0 || !strings.HasPrefix(devs.OpenCL.Devices[0].Class, "opencl/") {
		t.Fatalf("devices: OpenCL %+v", devs.OpenCL)
	}
	if out, errs, code := d.ctl("tune", "scale", "--budget", "6", "--wait"); code != 0 {
		t.Fatalf("tune scale --wait: exit %d\n%s\n%s", code, out, errs)
	}
	var trials api.Trials
	d.ctlJSON(&trials, "trials", "scale")
	ok := 0
	for _, tr := range trials.Trials {
		if tr.Status != "ok" {
			t.Errorf("scale trial %s: %s %s", tr.Key, tr.Status, tr.Error)
			continue
		}
		ok++
		if _, has := tr.PhasesMS["compilation"]; !has || tr.PhasesMS["benchmark"] <= 0 {
			t.Errorf("scale trial %s: phases %v, want compilation and benchmark", tr.Key, tr.PhasesMS)
		}
	}
	if ok < 6 {
		t.Errorf("%d ok trials of scale, want the 6 of the cycles", ok)
	}
	var cfg api.Config
	d.ctlJSON(&cfg, "config", "scale")
	if cfg.Match != api.MatchExact || cfg.Certificate == "" || cfg.Device != devs.OpenCL.Devices[0].Class {
		t.Fatalf("config scale = %+v, want an exact, certified answer on %s", cfg, devs.OpenCL.Devices[0].Class)
	}
	if out, errs, code := d.ctl("certs", "verify", cfg.Certificate); code != 0 {
		t.Errorf("certs verify %s: exit %d\n%s\n%s", cfg.Certificate, code, out, errs)
	}

	// Every fault costs its trial, never the daemon; none is served.
	if out, errs, code := d.ctl("tune", "faulty", "--budget", "10", "--wait"); code != 0 {
		t.Fatalf("tune faulty --wait: exit %d\n%s\n%s", code, out, errs)
	}
	d.ctlJSON(&trials, "trials", "faulty")
	seen := map[string]string{}
	for _, tr := range trials.Trials {
		seen[tr.Status] = tr.Error
	}
	for status, note := range map[string]string{
		"ok": "", "wrong_result": "output y differs", "compile": "FAULT=2", "timeout": "no answer",
		"runtime": "exited",
	} {
		if got, has := seen[status]; !has || !strings.Contains(got, note) {
			t.Errorf("faulty: no %s trial with %q (seen %v)", status, note, seen)
		}
	}
	// A work-group over the device's limit is left out of the space, not
	// spent as an invalid evaluation.
	for _, tr := range trials.Trials {
		if strings.HasPrefix(tr.Key, "8192,") {
			t.Errorf("faulty: config %s over the device's work-group limit was measured (%s)", tr.Key, tr.Status)
		}
	}
	d.ctlJSON(&cfg, "config", "faulty")
	if cfg.Config["FAULT"] != float64(0) || cfg.Certificate == "" {
		t.Errorf("config faulty = %+v, want a certified config with FAULT 0", cfg)
	}
	d.ctlJSON(&cfg, "config", "scale")
	if cfg.Certificate == "" {
		t.Errorf("config scale after the faults = %+v", cfg)
	}
	d.stop()
	if !strings.Contains(d.stderr.String(), "finalists measured again in fresh processes") {
		t.Errorf("no finalists measured again by default; log:\n%s", tail(d.stderr.String(), 4000))
	}
}

// TestOpenCLExamples tunes each kernel of examples/opencl through the real
// daemon, at a budget of 4 evaluations, until a certified config is served,
// then runs examples/opencl-gemm: the host program that builds matmul.cl
// with the served config's defines and checks its result.
func TestOpenCLExamples(t *testing.T) {
	t.Parallel()
	needOpenCL(t)
	dir := newDir(t, nil)
	kd := filepath.Join(dir, "kernels.d")
	specs, _ := filepath.Glob("../../examples/opencl/*.yaml")
	sources, _ := filepath.Glob("../../examples/opencl/*.cl")
	if len(specs) < 4 {
		t.Fatalf("examples/opencl holds %d specs", len(specs))
	}
	var kernels []string
	for _, f := range append(specs, sources...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".yaml") {
			var ok bool
			if b, ok = setBudget(b, "budget: {evals: 4}"); !ok {
				t.Fatalf("%s: no budget line to set", f)
			}
			for _, line := range strings.Split(string(b), "\n") {
				if name, found := strings.CutPrefix(line, "name: "); found {
					kernels = append(kernels, strings.TrimSpace(name))
				}
			}
		}
		if err := os.WriteFile(filepath.Join(kd, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Finalists off: TestOpenCLEndToEnd runs them, and here they would
	// start 3 more workers per kernel.
	d := start(t, dir, "--priors", stencilPack(t, dir), "--finalists", "0")
	for _, k := range kernels {
		if out, errs, code := d.ctl("config", k); code != 0 {
			t.Fatalf("config %s: exit %d (did its spec load?)\n%s\n%s", k, code, out, errs)
		}
	}
	served := map[string]api.Config{}
	deadline := time.Now().Add(testload.Scale(5 * time.Minute))
	for len(served) < len(kernels) {
		for _, k := range kernels {
			if _, done := served[k]; done {
				continue
			}
			out, _, code := d.ctl("config", k, "--json")
			var cfg api.Config
			if code == 0 && json.Unmarshal([]byte(out), &cfg) == nil && cfg.Certificate != "" && cfg.Match == api.MatchExact {
				served[k] = cfg
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("served within 5 minutes: %v of %v", slices.Collect(maps.Keys(served)), kernels)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, k := range kernels {
		var trials api.Trials
		d.ctlJSON(&trials, "trials", k)
		for _, tr := range trials.Trials {
			if tr.Status != "ok" && tr.Status != "invalid" {
				t.Errorf("%s trial %s: %s %s", k, tr.Key, tr.Status, tr.Error)
			}
			if tr.Status == "ok" && tr.PhasesMS["benchmark"] <= 0 {
				t.Errorf("%s trial %s: phases %v", k, tr.Key, tr.PhasesMS)
			}
		}
		t.Logf("%s: %s at %.4f ms (certificate %.16s), %d trials", k, served[k].Key, served[k].TimeMS, served[k].Certificate, len(trials.Trials))
	}
	// The pack's recording names another kernel: stencil-cl warm-started
	// from it by the source's SHA-256, as priors build --source recorded
	// it, and no other kernel did.
	var ks []api.Kernel
	d.ctlJSON(&ks, "kernels")
	for _, k := range ks {
		for _, j := range k.Jobs {
			want := k.Name == "stencil-cl"
			if got := j.Prior != nil && j.Prior.From == "pack" && slices.Equal(j.Prior.Sources, []string{"synthetic.qprior:stencil_synthetic"}); got != want {
				t.Errorf("%s's prior is %+v; want the pack's recording: %v", k.Name, j.Prior, want)
			}
		}
	}

	// The user's loop: ask, build with the defines, run, check.
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: examples/opencl-gemm is not built here")
	}
	if _, err := os.Stat("/usr/include/CL/cl.h"); err != nil {
		t.Skip("no OpenCL headers (.ci/run installs ocl-icd-opencl-dev): examples/opencl-gemm is not built here")
	}
	bin := filepath.Join(t.TempDir(), "opencl_gemm")
	if out, err := exec.Command(gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-pthread", "-o", bin,
		"../../examples/opencl-gemm/opencl_gemm.c", "../../runtime/c/quasim.c", "-lOpenCL", "-lm").CombinedOutput(); err != nil {
		t.Fatalf("gcc opencl_gemm.c: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-s", d.socket, "-n", "256", "-k", "../../examples/opencl/matmul.cl").CombinedOutput()
	mm := served["matmul-cl"]
	if err != nil || !strings.Contains(string(out), "config "+mm.Key+" (exact") || !strings.Contains(string(out), "\nok\n") {
		t.Fatalf("opencl_gemm: %v, want the served %s and ok:\n%s", err, mm.Key, out)
	}
	t.Logf("opencl_gemm:\n%s", out)
	d.stop()
	if strings.Contains(d.stderr.String(), "finalists measured again") {
		t.Errorf("finalists measured again under --finalists 0")
	}
}

// stencilPack builds, with quasimctl priors build --source, a pack from a
// synthetic recording (made here, not measured) of stencil.cl's kernel
// under another name, so that only the source's hash can match it.
func stencilPack(t *testing.T, dir string) string {
	t.Helper()
	_, ctl := binaries(t)
	keys := []string{"block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "use_local_mem", "use_padding"}
	cache := map[string]any{}
	for i, bx := range []int{16, 32} {
		for j, by := range []int{2, 4} {
			cache[fmt.Sprintf("%d,%d,1,1,0,0", bx, by)] = map[string]any{"block_size_x": bx, "block_size_y": by,
				"tile_size_x": 1, "tile_size_y": 1, "use_local_mem": 0, "use_padding": 0, "time": float64(1 + i + 2*j)}
		}
	}
	rec, err := json.Marshal(map[string]any{
		"device_name": "synthetic", "kernel_name": "stencil_synthetic", "problem_size": []int{2048, 2048},
		"tune_params_keys": keys,
		"tune_params": map[string]any{"block_size_x": []int{16, 32}, "block_size_y": []int{2, 4}, "tile_size_x": []int{1},
			"tile_size_y": []int{1}, "use_local_mem": []int{0}, "use_padding": []int{0}},
		"cache": cache,
	})
	if err != nil {
		t.Fatal(err)
	}
	recPath, pack := filepath.Join(dir, "stencil_synthetic.json"), filepath.Join(dir, "synthetic.qprior")
	if err := os.WriteFile(recPath, rec, 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "kernels.d", "stencil.cl")
	if out, err := exec.Command(ctl, "priors", "build", "-o", pack, "--source", "stencil_synthetic="+src, recPath).CombinedOutput(); err != nil {
		t.Fatalf("priors build: %v\n%s", err, out)
	}
	return pack
}

// setBudget replaces a spec's budget line.
func setBudget(spec []byte, line string) ([]byte, bool) {
	lines := strings.Split(string(spec), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "budget:") {
			lines[i] = line
			return []byte(strings.Join(lines, "\n")), true
		}
	}
	return spec, false
}

// TestOpenCLWorkerFaults makes the worker crash (a write through a null
// pointer) and hang (a kernel that never returns) on every evaluation but
// the reference's,
// QUASIM_OPENCL_FAULTS times each in a row (3 here; the soak of docs/kernel-authors/opencl.md
// runs 100), while a runtime looks up another kernel's served config: the
// daemon stays up, every lookup is answered, and nothing is served for the
// faulty kernels.
func TestOpenCLWorkerFaults(t *testing.T) {
	t.Parallel()
	needOpenCL(t)
	n := 3
	if v, err := strconv.Atoi(os.Getenv("QUASIM_OPENCL_FAULTS")); err == nil && v > 0 {
		n = v
	}
	// The reference (the default, FAULT 0) is right; every other config
	// has the fault.
	faulty := func(name string, fault, timeout string) string {
		spec := strings.Replace(faultySpec, "name: faulty", "name: "+name, 1)
		spec = strings.Replace(spec, "timeout: 8s", "timeout: "+timeout, 1)
		spec = strings.Replace(spec, "budget: {evals: 10}", fmt.Sprintf("budget: {evals: %d}", n+1), 1)
		vals := make([]string, n)
		for i := range vals {
			vals[i] = strconv.Itoa(i)
		}
		spec = strings.Replace(spec, "    FAULT: [0, 1, 2, 3, 4]", "    FAULT: [0, "+fault+"]\n    rep: ["+strings.Join(vals, ", ")+"]", 1)
		return spec + "constraints:\n  - FAULT != 0 or rep == 0\n"
	}
	dir := openclDir(t)
	os.Remove(filepath.Join(dir, "kernels.d", "faulty.yaml"))
	d := start(t, dir)
	served := waitServedKernel(t, d, "scale", "100000")

	// A runtime asks all along.
	stop := make(chan struct{})
	var lookups, failed atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			code, body := d.rawGet("/v1/configs/scale?problem=100000")
			lookups.Add(1)
			var cfg api.Config
			if code != 200 || json.Unmarshal(body, &cfg) != nil || cfg.Key != served.Key {
				failed.Add(1)
			}
		}
	}()
	// The timeout bounds preparing the reference too (compiled by pocl,
	// which takes seconds on a busy machine): scaled by the load.
	secs := func(d time.Duration) string { return fmt.Sprintf("%.0fs", math.Ceil(testload.Scale(d).Seconds())) }
	for name, body := range map[string]string{"crashy.yaml": faulty("crashy", "4", secs(10*time.Second)), "hangy.yaml": faulty("hangy", "3", secs(time.Second))} {
		body = strings.Replace(body, "block_size_x: [32, 8192]", "block_size_x: [32]", 1)
		if err := os.WriteFile(filepath.Join(dir, "kernels.d", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, errs, code := d.ctl("reload"); code != 0 {
		t.Fatalf("reload: exit %d\n%s\n%s", code, out, errs)
	}
	// Their first cycles run at once: every evaluation a fault. A crash
	// after other configs is tried again in a fresh worker (harness), so
	// each crashing config starts two workers.
	deadline := time.Now().Add(testload.Scale(time.Duration(n) * 20 * time.Second))
	for _, k := range []struct{ name, status string }{{"crashy", "runtime"}, {"hangy", "timeout"}} {
		for {
			var trials api.Trials
			d.ctlJSON(&trials, "trials", k.name)
			bad, ok := 0, 0
			for _, tr := range trials.Trials {
				switch {
				case tr.Status == k.status:
					bad++
				case tr.Status == "ok" && strings.HasPrefix(tr.Key, "32,1,0,"):
					ok++
				default:
					t.Fatalf("%s trial %s: %s %s", k.name, tr.Key, tr.Status, tr.Error)
				}
			}
			if bad == n && ok == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d %s trials of %d after %s", k.name, bad, k.status, n, testload.Scale(time.Duration(n)*20*time.Second))
			}
			time.Sleep(time.Second)
		}
		// Only the reference, the one right config, may be served.
		out, _, _ := d.ctl("config", k.name, "--json")
		var cfg api.Config
		json.Unmarshal([]byte(out), &cfg)
		if cfg.Config["FAULT"] != float64(0) {
			t.Errorf("%s: served %s", k.name, cfg.Key)
		}
	}
	close(stop)
	<-done
	if lookups.Load() == 0 || failed.Load() > 0 {
		t.Errorf("%d of %d lookups of scale failed while the worker crashed and hung", failed.Load(), lookups.Load())
	}
	t.Logf("%d crashes and %d hangs in a row; %d lookups answered meanwhile", n, n, lookups.Load())
	d.stop()
}

// TestOpenCLXgemm tunes the FAIR benchmark hub's gemm T1 (CLBlast's Xgemm)
// through the daemon: the T1 file from ../shared/spaces, its kernel file
// as Debian's libclblast1 carries it (examples/opencl-xgemm), and the spec
// beside it that gives what the T1 file gets wrong. The T1 file alone is
// listed with what is wrong, by field.
func TestOpenCLXgemm(t *testing.T) {
	t.Parallel()
	needOpenCL(t)
	t1, err := os.ReadFile("../../../shared/spaces/kernels/gemm_milo.T1.json")
	if err != nil {
		t.Skipf("the hub's gemm T1 is not here (../shared/spaces/kernels): %v", err)
	}
	const lib = "/usr/lib/x86_64-linux-gnu/libclblast.so.1"
	so, err := os.ReadFile(lib)
	if err != nil {
		t.Skipf("no CLBlast library to read Xgemm's source from (.ci/run installs libclblast1): %v", err)
	}
	// As examples/opencl-xgemm/extract_xgemm.py: each part is a string.
	var parts []string
	for _, marker := range []string{"typedef float real;", "#define MWG", "void Xgemm("} {
		i := strings.Index(string(so), marker)
		if i < 0 {
			t.Fatalf("%s: no %q", lib, marker)
		}
		start := strings.LastIndexByte(string(so[:i]), 0) + 1
		end := i + strings.IndexByte(string(so[i:]), 0)
		parts = append(parts, string(so[start:end]))
	}
	spec, err := os.ReadFile("../../examples/opencl-xgemm/xgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, _ = setBudget(spec, "budget: {evals: 4}")
	dir := newDir(t, map[string]string{"gemm_milo.T1.json": string(t1), "xgemm.yaml": string(spec)})
	kd := filepath.Join(dir, "kernels.d")
	os.MkdirAll(filepath.Join(kd, "gemm_milo"), 0o755)
	if err := os.WriteFile(filepath.Join(kd, "gemm_milo", "common.opencl"), []byte(strings.Join(parts, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	d := start(t, dir)
	cfg := waitServedKernel(t, d, "xgemm", "256,256,256")
	var trials api.Trials
	d.ctlJSON(&trials, "trials", "xgemm")
	for _, tr := range trials.Trials {
		if tr.Status != "ok" {
			t.Errorf("xgemm trial %s: %s %s", tr.Key, tr.Status, tr.Error)
		}
	}
	t.Logf("xgemm 256³: %s at %.4f ms (%.1f GFLOP/s) after %d trials", cfg.Key, cfg.TimeMS, 2*256*256*256/cfg.TimeMS/1e6, len(trials.Trials))
	out, _, _ := d.ctl("status")
	for _, w := range []string{"KernelSpecification.Arguments[0]: power is a buffer, but parameter 0 of Xgemm is", `KernelSpecification.CompilerOptions "-std=c++11"`, `KernelSpecification.LocalSize.X "block_size_x" is not a tuning parameter`} {
		if !strings.Contains(out, w) {
			t.Errorf("status does not say %q:\n%s", w, out)
		}
	}
	d.stop()
}

// TestBenchLiveCache brute-forces a small space with quasimctl bench live
// and reads the cache file back the way Kernel Tuner does: "cache" must
// be the last key (Kernel Tuner appends by cutting the closing "}\n}"),
// and quasimctl bench replays it.
func TestBenchLiveCache(t *testing.T) {
	t.Parallel()
	needOpenCL(t)
	_, qc := binaries(t)
	dir := openclDir(t)
	small := strings.Replace(scaleSpec, "block_size_x: [32, 64, 128, 256]\n    work_per_item: [1, 2, 4]", "block_size_x: [32, 64]\n    work_per_item: [1, 2]", 1)
	if small == scaleSpec {
		t.Fatal("scaleSpec's tune_params changed: update this test")
	}
	specPath := filepath.Join(dir, "kernels.d", "small.yaml")
	if err := os.WriteFile(specPath, []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "small.cache.json")
	out, err := exec.Command(qc, "bench", "live", specPath, "--brute-force", "--cache", cache, "--quiet").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "4 configs (4 ok)") {
		t.Fatalf("bench live --brute-force: %v\n%s", err, out)
	}
	b, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	var keys []string
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: %v %v", cache, tok, err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	if len(keys) == 0 || keys[len(keys)-1] != "cache" || !slices.Contains(keys, "tune_params_keys") {
		t.Fatalf("%s: top-level keys %v, want Kernel Tuner's header with \"cache\" last", cache, keys)
	}
	if s := strings.TrimSpace(string(b)); !strings.HasSuffix(s, "}}}") {
		t.Errorf("%s ends %q, want }}} as Kernel Tuner's closed files", cache, s[len(s)-10:])
	}
	var head struct {
		KernelName string `json:"kernel_name"`
	}
	if err := json.Unmarshal(b, &head); err != nil || head.KernelName != "scale" {
		t.Errorf("kernel_name %q (%v), want the OpenCL kernel's name scale", head.KernelName, err)
	}
	out, err = exec.Command(qc, "bench", "--space", cache, "--strategy", "random", "--budget", "4", "--seeds", "2").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "random") {
		t.Fatalf("bench --space %s: %v\n%s", cache, err, out)
	}
}

// TestSgemmPeers builds and runs examples/opencl-xgemm/sgemm_peers.c
// where CLBlast's and OpenBLAS's headers are installed (Debian's
// libclblast-dev and libopenblas-dev; CI does not install them).
func TestSgemmPeers(t *testing.T) {
	t.Parallel()
	needOpenCL(t)
	for _, h := range []string{"/usr/include/clblast_c.h", "/usr/include/x86_64-linux-gnu/cblas.h"} {
		if _, err := os.Stat(h); err != nil {
			t.Skipf("%s not installed (libclblast-dev, libopenblas-dev): sgemm_peers is not built here", h)
		}
	}
	bin := filepath.Join(t.TempDir(), "sgemm_peers")
	if out, err := exec.Command("cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-o", bin,
		"../../examples/opencl-xgemm/sgemm_peers.c", "-lclblast", "-lopenblas", "-lOpenCL", "-lm").CombinedOutput(); err != nil {
		t.Fatalf("cc sgemm_peers.c: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-n", "64", "-r", "2").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "openblas") || !strings.Contains(string(out), "max rel. difference from OpenBLAS") {
		t.Fatalf("sgemm_peers: %v\n%s", err, out)
	}
	_, rest, _ := strings.Cut(string(out), "max rel. difference from OpenBLAS ")
	if diff, err := strconv.ParseFloat(strings.Fields(rest)[0], 64); err != nil || diff > 1e-4 {
		t.Errorf("CLBlast's sgemm differs from OpenBLAS's by %v (%v):\n%s", diff, err, out)
	}
	if out, err := exec.Command(bin, "-k", "x.cl").CombinedOutput(); err == nil || !strings.Contains(string(out), "go together") {
		t.Errorf("sgemm_peers -k without -D: %v\n%s", err, out)
	}
}
