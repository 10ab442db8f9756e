package main

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/evaluate/replay"
)

// sharedSpaces is the folder of real recorded spaces beside the checkout.
func sharedSpaces(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "spaces"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kernels", "convolution_milo.T1.json")); err != nil {
		t.Skipf("skipping: the shared real spaces are not at %s (%v)", dir, err)
	}
	return dir
}

// TestImportForeignDevice imports a real GPU cache into a T1 kernel (whose
// own job has device class "none"): what import says it stored must be
// listed by trials, kernels and status, exported, kept across a restart,
// and warm-start a later job of the kernel.
func TestImportForeignDevice(t *testing.T) {
	t.Parallel()
	spaces := sharedSpaces(t)
	t1, err := os.ReadFile(filepath.Join(spaces, "kernels", "convolution_milo.T1.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := newDir(t, map[string]string{"convolution_milo.T1.json": string(t1)})
	d := start(t, dir)
	out, errs, code := d.ctl("import", filepath.Join(spaces, "convolution_milo_A100.json.gz"), "--kernel", "convolution_milo")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	m := regexp.MustCompile(`: (\d+) stored`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("import said %q", out)
	}
	stored, _ := strconv.Atoi(m[1])
	if stored < 1000 {
		t.Fatalf("import stored %d trials, want the cache's valid configs", stored)
	}
	const device = "nvidia/NVIDIA A100-PCIE-40GB"
	check := func(when string) {
		t.Helper()
		var tr api.Trials
		d.ctlJSON(&tr, "trials", "convolution_milo", "--all")
		n := 0
		for _, x := range tr.Trials {
			if x.Device == device {
				n++
			}
		}
		if n != stored {
			t.Errorf("%s: trials lists %d of the %d imported", when, n, stored)
		}
		var ks []api.Kernel
		d.ctlJSON(&ks, "kernels")
		found := false
		for _, k := range ks {
			for _, j := range k.Jobs {
				found = found || (k.Name == "convolution_milo" && j.Device == device && j.Trials == stored && j.Foreign)
			}
		}
		if !found {
			t.Errorf("%s: kernels has no foreign job of %s with %d trials: %+v", when, device, stored, ks)
		}
		var st api.Status
		d.ctlJSON(&st, "status")
		if st.Trials < stored {
			t.Errorf("%s: status counts %d trials, want at least %d", when, st.Trials, stored)
		}
		t4 := filepath.Join(t.TempDir(), "out.json")
		if _, errs, code := d.ctl("export", "convolution_milo", "--device", device, "-o", t4); code != 0 {
			t.Fatalf("%s: export: exit %d: %s", when, code, errs)
		}
		var doc struct{ Results []json.RawMessage }
		data, _ := os.ReadFile(t4)
		if err := json.Unmarshal(data, &doc); err != nil || len(doc.Results) != stored {
			t.Errorf("%s: export wrote %d results (%v), want %d", when, len(doc.Results), err, stored)
		}
	}
	check("after import")
	d.stop()
	d = start(t, dir)
	check("after a restart")
	d.stop()

	// The same kernel with an evaluator on another GPU: its new job
	// warm-starts from the imported A100 trials.
	os.Remove(filepath.Join(dir, "kernels.d", "convolution_milo.T1.json"))
	spec := "name: convolution_milo\nevaluator: replay:" + filepath.Join(spaces, "convolution_milo_A4000.json.gz") +
		"\nproblems: [\"4096,4096\"]\nschedule: \"@every 1h\"\nbudget: {evals: 10}\n"
	if err := os.WriteFile(filepath.Join(dir, "kernels.d", "conv.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	d = start(t, dir)
	waitServedKernel(t, d, "convolution_milo", "4096,4096")
	d.stop()
	if !strings.Contains(d.stderr.String(), `"message":"warm start"`) {
		t.Fatalf("the new job was not warm-started from the import")
	}
	if !strings.Contains(d.stderr.String(), device) {
		t.Errorf("warm start does not name the imported job of %s", device)
	}
}

// TestT4RoundTrip: a real Kernel Tuner cache → import → export T4 →
// import → export T4. The export passes the official FAIR T4 schema and
// keeps, config by config, every number of the cache it can represent:
// status, time, repetitions, the five phase times, GFLOP/s, the timestamp
// and the simulated cost; the second export equals the first.
func TestT4RoundTrip(t *testing.T) {
	t.Parallel()
	spaces := sharedSpaces(t)
	t1, err := os.ReadFile(filepath.Join(spaces, "kernels", "convolution_milo.T1.json"))
	if err != nil {
		t.Fatal(err)
	}
	d := start(t, newDir(t, map[string]string{"convolution_milo.T1.json": string(t1)}))
	cache := filepath.Join(spaces, "convolution_milo_A100.json.gz")
	const dev1, dev2 = "nvidia/NVIDIA A100-PCIE-40GB", "roundtrip/A100"
	tmp := t.TempDir()
	first, second := filepath.Join(tmp, "first.json"), filepath.Join(tmp, "second.json")
	for _, step := range [][]string{
		{"import", cache, "--kernel", "convolution_milo"},
		{"export", "convolution_milo", "--device", dev1, "-o", first},
		{"import", first, "--kernel", "convolution_milo", "--problem", "4096,4096", "--device", dev2},
		{"export", "convolution_milo", "--device", dev2, "-o", second},
	} {
		if _, errs, code := d.ctl(step...); code != 0 {
			t.Fatalf("quasimctl %v: exit %d: %s", step, code, errs)
		}
	}
	validateT4(t, first)
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if string(a) != string(b) {
		t.Errorf("the export of the re-imported T4 differs from the first export")
	}

	orig, err := replay.Load(cache)
	if err != nil {
		t.Fatal(err)
	}
	back, err := replay.Load(first)
	if err != nil {
		t.Fatal(err)
	}
	if back.Len() != orig.Len() {
		t.Fatalf("export has %d configs, the cache %d", back.Len(), orig.Len())
	}
	phases, observed := 0, 0
	for _, k := range orig.Keys() {
		o, _ := orig.Trial(k)
		g, ok := back.Trial(k)
		if !ok {
			t.Fatalf("config %s is not in the export", k)
		}
		switch {
		case g.Status != o.Status || g.Time != o.Time || !slices.Equal(g.Times, o.Times):
			t.Errorf("%s: status %s time %v times %v, want %s %v %v", k, g.Status, g.Time, g.Times, o.Status, o.Time, o.Times)
		case !maps.Equal(g.PhasesMS, o.PhasesMS) || !maps.Equal(g.Observables, o.Observables):
			t.Errorf("%s: phases %v observables %v, want %v %v", k, g.PhasesMS, g.Observables, o.PhasesMS, o.Observables)
		case !g.At.Equal(o.At) || o.At.IsZero():
			t.Errorf("%s: timestamp %v, want the recorded %v", k, g.At, o.At)
		case g.Cost != o.Cost || g.EnergyMJ != o.EnergyMJ:
			t.Errorf("%s: cost %v energy %v, want %v %v", k, g.Cost, g.EnergyMJ, o.Cost, o.EnergyMJ)
		}
		if len(o.PhasesMS) == 5 {
			phases++
		}
		if o.Observables["GFLOP/s"] > 0 {
			observed++
		}
	}
	if phases != orig.Len() || observed == 0 {
		t.Errorf("the cache should record 5 phases for all %d configs (%d do) and GFLOP/s for some (%d)", orig.Len(), phases, observed)
	}
}

// TestPriorPack builds a prior pack from two real GPUs' recordings with
// quasimctl, starts quasimd with it and a replay job of the same kernel on a
// third GPU: the job warm-starts from the pack (leave one GPU out), serves
// a certified config, and quasimctl kernels names the prior, across a
// restart.
func TestPriorPack(t *testing.T) {
	t.Parallel()
	spaces := sharedSpaces(t)
	_, ctl := binaries(t)
	dir := newDir(t, map[string]string{"conv.yaml": "name: convolution_milo\nevaluator: replay:" +
		filepath.Join(spaces, "convolution_milo_A100.json.gz") +
		"\nproblems: [\"4096,4096\"]\nschedule: \"@every 1h\"\nbudget: {evals: 12}\n"})
	pack := filepath.Join(dir, "hub.qprior")
	build := exec.Command(ctl, "priors", "build", "-o", pack,
		filepath.Join(spaces, "convolution_milo_A4000.json.gz"), filepath.Join(spaces, "convolution_milo_A6000.json.gz"),
		filepath.Join(spaces, "dedispersion_milo_A4000.json.gz"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("priors build: %v\n%s", err, out)
	}
	d := start(t, dir, "--priors", pack)
	waitServedKernel(t, d, "convolution_milo", "4096,4096")
	check := func(when string) {
		t.Helper()
		var ks []api.Kernel
		d.ctlJSON(&ks, "kernels")
		var p *api.Prior
		for _, k := range ks {
			for _, j := range k.Jobs {
				if k.Name == "convolution_milo" && j.Problem == "4096,4096" {
					p = j.Prior
				}
			}
		}
		want := []string{"hub.qprior:convolution_milo_A4000", "hub.qprior:convolution_milo_A6000"}
		if p == nil || p.From != "pack" || !slices.Equal(p.Sources, want) || p.Ranked < 1000 {
			t.Fatalf("%s: the job's prior is %+v, want the pack's two convolution sources (not dedispersion's)", when, p)
		}
		out, _, code := d.ctl("kernels")
		if code != 0 || !strings.Contains(out, "warm-started from a prior pack") || !strings.Contains(out, "hub.qprior:convolution_milo_A4000") {
			t.Fatalf("%s: kernels does not name the prior:\n%s", when, out)
		}
		t.Logf("%s: quasimctl kernels:\n%s", when, out)
	}
	check("after the first cycle")
	var tr api.Trials
	d.ctlJSON(&tr, "trials", "convolution_milo")
	if len(tr.Trials) < 2 {
		t.Fatalf("%d trials", len(tr.Trials))
	}
	d.stop()
	d = start(t, dir, "--priors", pack)
	check("after a restart")
	d.stop()
	if !strings.Contains(d.stderr.String(), "prior packs loaded") {
		t.Errorf("the start-up log does not list the packs")
	}
}
