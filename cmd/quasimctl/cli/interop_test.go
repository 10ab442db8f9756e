package cli

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate/replay"
)

// writeObjectiveCache writes a Kernel Tuner cache of one parameter p = 1..n whose
// objective is value(p) under the given name, and returns its path.
func writeObjectiveCache(t *testing.T, path, objective string, n int, value func(p int) float64) string {
	t.Helper()
	var vals, entries []string
	for p := 1; p <= n; p++ {
		vals = append(vals, fmt.Sprint(p))
		entries = append(entries, fmt.Sprintf(`"%d":{"p":%d,%q:%v,"time":%v,"compile_time":1}`, p, p, objective, value(p), float64(p)))
	}
	if objective == "time" {
		entries = entries[:0]
		for p := 1; p <= n; p++ {
			entries = append(entries, fmt.Sprintf(`"%d":{"p":%d,"time":%v,"compile_time":1}`, p, p, value(p)))
		}
	}
	doc := fmt.Sprintf(`{"kernel_name":"k","device_name":"NVIDIA X","objective":%q,"tune_params_keys":["p"],"tune_params":{"p":[%s]},"cache":{%s}}`,
		objective, strings.Join(vals, ","), strings.Join(entries, ","))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// bench --budget 50 reports k=25 and k=50, nothing it never reached.
func TestBenchKsWithinBudget(t *testing.T) {
	t.Parallel()
	f := writeObjectiveCache(t, filepath.Join(t.TempDir(), "big.json"), "time", 600, func(p int) float64 { return float64(p) })
	out, errs, code := run(t, "bench", "--budget", "50", "--seeds", "2", "--quiet", "--json", "--space", f)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if rep := decodeReport(t, out); !slices.Equal(rep.Ks, []int{25, 50}) {
		t.Errorf("ks = %v, want [25 50]", rep.Ks)
	}
	out, _, _ = run(t, "bench", "--budget", "50", "--seeds", "2", "--quiet", "--space", f)
	if strings.Contains(out, "k=100") || !strings.Contains(out, "k=50") {
		t.Errorf("table columns:\n%s", out)
	}
}

// The benchmark hub's layout, kernel/GPU.json.gz: two files of one base
// name in different folders are both benchmarked, named folder/name.
func TestBenchSameBaseName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := writeObjectiveCache(t, filepath.Join(dir, "conv", "A100.json"), "time", 30, func(p int) float64 { return float64(p) })
	b := writeObjectiveCache(t, filepath.Join(dir, "gemm", "A100.json"), "time", 30, func(p int) float64 { return float64(31 - p) })
	out, errs, code := run(t, "bench", "--budget", "10", "--seeds", "1", "--quiet", "--json", "--space", a, "--space", b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var names []string
	for _, s := range decodeReport(t, out).Spaces {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"conv/A100", "gemm/A100"}) {
		t.Errorf("spaces %v, want conv/A100 and gemm/A100", names)
	}
	// The very same file twice is still refused.
	if _, errs, code := run(t, "bench", "--space", a, "--space", a); code != exitUsage || !strings.Contains(errs, "same name") {
		t.Errorf("the same file twice: exit %d, %s", code, errs)
	}
}

// A score to minimise that goes negative, and a rate to maximise: bench
// replays them, and the fraction follows the documented rule.
func TestBenchObjectives(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	score := writeObjectiveCache(t, filepath.Join(dir, "score.json"), "score", 40, func(p int) float64 { return float64(p) - 30.5 })
	rate := writeObjectiveCache(t, filepath.Join(dir, "rate.json"), "GFLOP/s", 40, func(p int) float64 { return 10 * float64(p) })
	out, errs, code := run(t, "bench", "--budget", "50", "--seeds", "3", "--quiet", "--json", "--strategy", "random", "--space", score, "--space", rate)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rep := decodeReport(t, out)
	want := map[string]spaceInfo{
		"score": {Objective: "score", OptimumValue: -29.5, Rule: replay.RuleRange},
		"rate":  {Objective: "GFLOP/s", Maximize: true, OptimumValue: 400, Rule: replay.RuleInverse},
	}
	for _, s := range rep.Spaces {
		w := want[s.Name]
		if s.Objective != w.Objective || s.Maximize != w.Maximize || s.OptimumValue != w.OptimumValue || s.Rule != w.Rule {
			t.Errorf("space %s: %+v, want %+v", s.Name, s, w)
		}
	}
	for _, sc := range rep.Scores {
		// Every run measures the whole space (40 configs), so it reaches
		// the optimum: evals-to-95% is defined.
		if sc.EvalsTo95 == nil || *sc.EvalsTo95 > 40 {
			t.Errorf("%s: evals to 95%% = %v, want at most 40", sc.Space, sc.EvalsTo95)
		}
		// Random agrees with its exact expectation within sampling noise.
		if exp := rep.RandomExp[sc.Space][25]; math.Abs(sc.At[25]-exp) > 0.2 {
			t.Errorf("%s: random at k=25 = %v, exact expectation %v", sc.Space, sc.At[25], exp)
		}
	}
}

// Importing a recording whose objective is a score keeps the score among
// the observables and the recorded time as the trial's time; without a
// time it is refused, naming the objective.
func TestImportObjective(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	path := writeObjectiveCache(t, filepath.Join(t.TempDir(), "score.json"), "score", 3, func(p int) float64 { return 1 - float64(p) })
	rec, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	req, err := importRequest(rec, "64", "gpu/x", at)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range req.Trials {
		p, _ := strconv.Atoi(tr.Key)
		if tr.TimeMS != float64(p) || tr.Observables["score"] != 1-float64(p) || len(tr.Observables) != 1 || !tr.At.Equal(at) || tr.PhasesMS["compilation"] != 1 {
			t.Errorf("trial %+v, want time %d ms and score %d", tr, p, 1-p)
		}
	}
	data, _ := os.ReadFile(path)
	noTime := regexp.MustCompile(`,"time":[0-9.]+`).ReplaceAll(data, nil)
	rec, err = replay.Parse("score_only.json", noTime)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := importRequest(rec, "64", "gpu/x", at); err == nil || !strings.Contains(err.Error(), "the objective is score and no time is recorded") {
		t.Errorf("import of a score without times: %v", err)
	}
}
