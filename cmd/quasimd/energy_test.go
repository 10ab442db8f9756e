package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/replay"
)

// TestEnergyReplay tunes the synthetic energy recording (labelled so in
// evaluate/replay/testdata) under the time and the energy objective with a
// real quasimd: they serve different configs, and a lookup with
// ?objective=energy&max_slowdown=0.05 on the time job's front reports the
// energy saved against the fastest config at the slowdown paid. The
// expected configs come from the recording itself, searched exhaustively.
func TestEnergyReplay(t *testing.T) {
	t.Parallel()
	file, err := filepath.Abs("../../evaluate/replay/testdata/synthetic_energy.json")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := replay.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	// The whole space is the budget, so each objective's optimum is known.
	var pts []evaluate.Point
	var fastest, frugal evaluate.Point
	for _, k := range rec.Keys() {
		tr, _ := rec.Trial(k)
		if !tr.OK() {
			continue
		}
		p := evaluate.Point{Key: k, TimeMS: tr.Time, EnergyMJ: tr.EnergyMJ}
		pts = append(pts, p)
		if fastest.Key == "" || p.TimeMS < fastest.TimeMS {
			fastest = p
		}
		if frugal.Key == "" || p.EnergyMJ < frugal.EnergyMJ {
			frugal = p
		}
	}
	within, _ := evaluate.Choose(evaluate.Front(pts), evaluate.Objective{Kind: "energy"}, 0.05)
	spec := func(name, obj string) string {
		return "name: " + name + "\nevaluator: replay:" + file + "\nobjective: " + obj + "\nschedule: \"@every 1h\"\nbudget: {evals: 400}\n"
	}
	dir := newDir(t, map[string]string{
		"gemm-time.yaml":   spec("gemm-time", "time"),
		"gemm-energy.yaml": spec("gemm-energy", "energy"),
	})
	d := start(t, dir)
	problem := "4096,4096"
	byTime := waitServedKernel(t, d, "gemm-time", problem)
	byEnergy := waitServedKernel(t, d, "gemm-energy", problem)
	if byTime.Key != fastest.Key || byEnergy.Key != frugal.Key || byTime.Key == byEnergy.Key {
		t.Fatalf("served: time objective %s, energy objective %s; want %s and %s", byTime.Key, byEnergy.Key, fastest.Key, frugal.Key)
	}
	var pol api.Config
	d.ctlJSON(&pol, "config", "gemm-time", "--problem", problem, "--objective", "energy", "--max-slowdown", "0.05")
	f := pol.Front
	if f == nil || pol.Key != within.Key || pol.Certificate == "" || f.FastestKey != fastest.Key {
		t.Fatalf("objective=energy&max_slowdown=0.05: %+v (front %+v); want %s", pol, f, within.Key)
	}
	wantSaved := 1 - within.EnergyMJ/fastest.EnergyMJ
	wantSlow := within.TimeMS/fastest.TimeMS - 1
	if math.Abs(f.EnergySaved-wantSaved) > 1e-9 || math.Abs(f.Slowdown-wantSlow) > 1e-9 || f.Slowdown > 0.05 || f.EnergySaved <= 0 {
		t.Errorf("saved %v at slowdown %v; want %v at %v", f.EnergySaved, f.Slowdown, wantSaved, wantSlow)
	}
	var free api.Config
	d.ctlJSON(&free, "config", "gemm-time", "--problem", problem, "--objective", "energy")
	if free.Key != frugal.Key {
		t.Errorf("objective=energy without a limit: %s, want %s", free.Key, frugal.Key)
	}
	out, _, _ := d.ctl("config", "gemm-time", "--problem", problem, "--objective", "energy", "--max-slowdown", "0.05")
	t.Logf("time objective serves %s (%.3f ms, %.1f mJ); energy objective serves %s (%.3f ms, %.1f mJ): %.1f%% less energy, %.1f%% slower",
		fastest.Key, fastest.TimeMS, fastest.EnergyMJ, frugal.Key, frugal.TimeMS, frugal.EnergyMJ,
		100*(1-frugal.EnergyMJ/fastest.EnergyMJ), 100*(frugal.TimeMS/fastest.TimeMS-1))
	t.Logf("front of %d certified configs; quasimctl config gemm-time --objective energy --max-slowdown 0.05:\n%s", f.Points, out)

	// A revoked certificate of a point on the front (not the served one)
	// takes that point off the front at once.
	if out, errs, code := d.ctl("certs", "revoke", pol.Certificate, "--reason", "test: front point revoked"); code != 0 {
		t.Fatalf("certs revoke: exit %d\n%s%s", code, out, errs)
	}
	var after api.Config
	d.ctlJSON(&after, "config", "gemm-time", "--problem", problem, "--objective", "energy", "--max-slowdown", "0.05")
	// (The re-verification the revocation queues may redraw the front
	// meanwhile, without the revoked config: it is never certified again.)
	if after.Key == pol.Key || after.Certificate == pol.Certificate || after.Front == nil {
		t.Errorf("after revoking %s: %+v (front %+v), want another config from the front", pol.Key, after, after.Front)
	}
}

// TestEnergyJobBesidePriorPacks runs a real quasimd with two prior packs of
// the synthetic energy recording's kernel, one ranked by time and one by
// energy, and two jobs of it, one per objective: each job warm-starts from
// the pack ranked by its own objective only. A daemon that did not pass the
// job's objective to the packs would start the energy job from the time
// pack: the fastest config is not the most frugal.
func TestEnergyJobBesidePriorPacks(t *testing.T) {
	t.Parallel()
	_, ctl := binaries(t)
	file, err := filepath.Abs("../../evaluate/replay/testdata/synthetic_energy.json")
	if err != nil {
		t.Fatal(err)
	}
	spec := func(name, obj string) string {
		return "name: " + name + "\nevaluator: replay:" + file + "\nobjective: " + obj + "\nschedule: \"@every 1h\"\nbudget: {evals: 12}\n"
	}
	dir := newDir(t, map[string]string{
		"gemm-time.yaml":   spec("gemm-time", "time"),
		"gemm-energy.yaml": spec("gemm-energy", "energy"),
	})
	// The energy recording is the same synthetic cache with its objective
	// the energy per run (in mJ, quasim's unit), as a recording by energy
	// names it.
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cache map[string]any
	if err := json.Unmarshal(raw, &cache); err != nil {
		t.Fatal(err)
	}
	for key, e := range cache["cache"].(map[string]any) {
		entry := e.(map[string]any)
		j, ok := entry["nvml_energy"].(float64)
		if !ok {
			t.Fatalf("%s: no nvml_energy", key)
		}
		entry["energy"] = j * 1000
	}
	cache["objective"] = "energy"
	byEnergy, _ := json.Marshal(cache)
	rec := filepath.Join(dir, "synthetic_energy_by_energy.json")
	if err := os.WriteFile(rec, byEnergy, 0o644); err != nil {
		t.Fatal(err)
	}
	packs := filepath.Join(dir, "priors.d")
	if err := os.Mkdir(packs, 0o755); err != nil {
		t.Fatal(err)
	}
	for pack, from := range map[string]string{"time.qprior": file, "energy.qprior": rec} {
		if out, err := exec.Command(ctl, "priors", "build", "-o", filepath.Join(packs, pack), from).CombinedOutput(); err != nil {
			t.Fatalf("priors build %s: %v\n%s", pack, err, out)
		}
	}
	d := start(t, dir, "--priors", packs)
	problem := "4096,4096"
	waitServedKernel(t, d, "gemm-time", problem)
	waitServedKernel(t, d, "gemm-energy", problem)
	var ks []api.Kernel
	d.ctlJSON(&ks, "kernels")
	prior := map[string]*api.Prior{}
	for _, k := range ks {
		for _, j := range k.Jobs {
			if j.Problem == problem {
				prior[k.Name] = j.Prior
			}
		}
	}
	for kernel, want := range map[string]string{
		"gemm-time":   "time.qprior:synthetic_energy",
		"gemm-energy": "energy.qprior:synthetic_energy_by_energy",
	} {
		p := prior[kernel]
		if p == nil || p.From != "pack" || !slices.Equal(p.Sources, []string{want}) {
			t.Errorf("%s warm-started from %+v, want the pack source %s alone", kernel, p, want)
		}
	}
	out, _, _ := d.ctl("kernels")
	t.Logf("quasimctl kernels:\n%s", out)
}
