package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCache writes a small Kernel Tuner cache of kernel k on device dev,
// with the given valid times (others fail to compile).
func writeCache(t *testing.T, path, dev string, times map[string]float64) {
	t.Helper()
	cache := map[string]any{}
	for _, bx := range []int{16, 32, 64, 128} {
		for _, f := range []string{"0.5", "1.0"} {
			key := strings.Join([]string{itoa(bx), f}, ",")
			e := map[string]any{"bx": bx, "f": json.Number(f), "time": "CompilationFailedConfig"}
			if v, ok := times[key]; ok {
				e["time"] = v
			}
			cache[key] = e
		}
	}
	data, err := json.Marshal(map[string]any{
		"device_name": dev, "kernel_name": "k", "problem_size": []int{64},
		"tune_params_keys": []string{"bx", "f"},
		"tune_params":      map[string]any{"bx": []int{16, 32, 64, 128}, "f": []json.Number{"0.5", "1.0"}},
		"cache":            cache,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// bench --warm-from leaves the target's own device out, measures first the
// config the other device ranks best (its time there ten times slower: ranks,
// not times, transfer), and bench score rescores the warm runs bit for bit.
func TestBenchWarmFrom(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "k_a.json")
	writeCache(t, target, "GPU A", map[string]float64{"16,0.5": 4, "32,0.5": 3, "64,0.5": 1, "128,0.5": 2, "16,1.0": 5, "32,1.0": 6})
	// Device B ranks 64,1.0 first; on A it fails to compile: a prior can be
	// wrong, and is measured first all the same.
	writeCache(t, filepath.Join(dir, "k_b.json"), "GPU B", map[string]float64{"64,1.0": 10, "128,1.0": 20, "64,0.5": 30, "16,0.5": 40})
	// A recording of A itself must be left out.
	writeCache(t, filepath.Join(dir, "k_a_again.json"), "GPU A", map[string]float64{"16,1.0": 1})
	traces := t.TempDir()
	out, errs, code := run(t, "bench", "--space", target, "--warm-from", dir, "--strategy", "portfolio",
		"--budget", "4", "--seeds", "2", "--json", "--trace", traces)
	if code != 0 {
		t.Fatalf("bench exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "k_a warms from [k_b (") || strings.Contains(errs, "k_a_again (") {
		t.Errorf("stderr does not say k_a warms from k_b alone:\n%s", errs)
	}
	f, err := os.Open(filepath.Join(traces, "k_a", "portfolio+warm", "seed-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	var first traceLine
	if err := json.Unmarshal(sc.Bytes(), &first); err != nil {
		t.Fatal(err)
	}
	if first.Key != "64,1.0" || first.By != "warm" {
		t.Errorf("first warm evaluation %+v, want 64,1.0 by warm", first)
	}
	got := decodeReport(t, out)
	out2, errs, code := run(t, "bench", "score", "--json", "--space", target, "--trace", traces)
	if code != 0 {
		t.Fatalf("bench score exit %d: %s", code, errs)
	}
	want := decodeReport(t, out2)
	a, _ := json.Marshal(got.Scores)
	b, _ := json.Marshal(want.Scores)
	if string(a) != string(b) {
		t.Errorf("bench and bench score disagree:\n%s\n%s", a, b)
	}
	if _, errs, code := run(t, "bench", "--space", target, "--warm-from", dir, "--strategy", "schedules"); code != 2 || !strings.Contains(errs, "takes no warm start") {
		t.Errorf("--warm-from with schedules: exit %d, %q; want 2 and the reason", code, errs)
	}
}
