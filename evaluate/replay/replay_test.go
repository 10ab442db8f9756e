package replay

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quasim/quasim/evaluate"
)

func TestCache(t *testing.T) {
	t.Parallel()
	rec, err := Load("testdata/small_cache.json")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Name != "small_cache" || rec.Device() != "nvidia/NVIDIA Test GPU" || !slices.Equal(rec.Problem, []int{64, 64}) {
		t.Errorf("got name %q device %q problem %v", rec.Name, rec.Device(), rec.Problem)
	}
	sp, err := rec.Space(evaluate.Problem{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sp.All()); n != 5 {
		t.Fatalf("domain has %d configs, want the file's 5", n)
	}
	tests := []struct {
		key    string
		status evaluate.Status
		time   float64
		cost   float64
	}{
		{"16,0.5,a", evaluate.StatusOK, 2.0, 0.55},
		{"32,0.5,a", evaluate.StatusOK, 1.5, 0.45},
		{"64,1.0,b", evaluate.StatusCompile, 0, 0.305},
		{"64,0.5,b", evaluate.StatusRuntime, 0, 0.305},
		{"16,1.0,b", evaluate.StatusInvalid, 0, 0},
	}
	for _, tt := range tests {
		c, err := sp.ParseKey(tt.key)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := rec.Evaluate(context.Background(), c, evaluate.Problem{Dims: []int{64, 64}})
		if err != nil {
			t.Fatalf("Evaluate(%q): %v", tt.key, err)
		}
		if tr.Key != tt.key || tr.Status != tt.status || tr.Time != tt.time || math.Abs(tr.Cost-tt.cost) > 1e-9 {
			t.Errorf("Evaluate(%q) = %+v, want status %s time %v cost %v", tt.key, tr, tt.status, tt.time, tt.cost)
		}
	}
	if opt, key := rec.Optimum(); opt != 1.5 || key != "32,0.5,a" {
		t.Errorf("Optimum() = %v %q", opt, key)
	}
	// framework_time 10, 20, 5 and 5 ms; the fifth config has none.
	if got := rec.FrameworkMS(); got != 10 {
		t.Errorf("FrameworkMS() = %v, want 10", got)
	}
	// Outside the domain, and the wrong problem.
	c, _ := sp.ParseKey("32,1.0,b")
	if _, err := rec.Evaluate(context.Background(), c, evaluate.Problem{}); !errors.Is(err, evaluate.ErrNotInSpace) {
		t.Errorf("Evaluate(unrecorded) = %v, want ErrNotInSpace", err)
	}
	if _, err := rec.Space(evaluate.Problem{Dims: []int{1}}); !errors.Is(err, evaluate.ErrUnknownProblem) {
		t.Errorf("Space(wrong problem) = %v, want ErrUnknownProblem", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rec.Evaluate(ctx, sp.All()[0], evaluate.Problem{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Evaluate(cancelled) = %v", err)
	}
}

func TestT4(t *testing.T) {
	t.Parallel()
	rec, err := Load("testdata/small_t4.json")
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := rec.Space(evaluate.Problem{})
	if got := sp.Params()[0].Values; len(got) != 3 || got[0].I != 16 || got[2].I != 64 {
		t.Errorf("bx values = %v, want sorted 16,32,64", got)
	}
	tr, ok := rec.Trial("32,0.5,a")
	if !ok || tr.Status != evaluate.StatusOK || tr.Time != 1.5 || math.Abs(tr.Cost-0.423) > 1e-9 {
		t.Errorf("Trial(32,0.5,a) = %+v", tr)
	}
	if tr, _ := rec.Trial("64,1.0,b"); tr.Status != evaluate.StatusCompile {
		t.Errorf("Trial(64,1.0,b).Status = %s, want compile", tr.Status)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, data, want string
	}{
		{"not json", `{"cache":`, "bad.json"},
		{"neither", `{"foo": 1}`, "neither"},
		{"no keys", `{"cache": {}}`, "tune_params_keys"},
		{"missing values", `{"tune_params_keys":["a"],"tune_params":{},"cache":{}}`, `no values for "a"`},
		{"key not in params", `{"tune_params_keys":["a"],"tune_params":{"a":[1]},"cache":{"2":{"time":1}}}`, `"2"`},
		{"bad time", `{"tune_params_keys":["a"],"tune_params":{"a":[1]},"cache":{"1":{"time":"Exploded"}}}`, `cache["1"]: time: unknown failure "Exploded"`},
		{"missing time", `{"tune_params_keys":["a"],"tune_params":{"a":[1]},"cache":{"1":{}}}`, `cache["1"]: time: missing`},
		{"t4 empty", `{"results": []}`, "results: empty"},
		{"t4 invalidity", `{"results": [{"configuration":{"a":1},"invalidity":"weird"}]}`, `results[0].invalidity`},
		{"t4 no time", `{"results": [{"configuration":{"a":1},"invalidity":"correct","measurements":[]}]}`, `no "time"`},
		{"t4 ragged", `{"results": [{"configuration":{"a":1},"invalidity":"compile"},{"configuration":{"b":1},"invalidity":"compile"}]}`, `results[1].configuration`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.json", []byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "bad.json") {
				t.Errorf("Parse = %v, want an error naming bad.json and %q", err, tt.want)
			}
		})
	}
	if _, err := Load("testdata/missing.json"); err == nil {
		t.Errorf("Load(missing) = nil error")
	}
	bad := filepath.Join(t.TempDir(), "bad.json.gz")
	os.WriteFile(bad, []byte("not gzip"), 0o644)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "bad.json.gz") {
		t.Errorf("Load(not gzip) = %v", err)
	}
}

func TestGzip(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/small_cache.json")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "small.json.gz")
	f, _ := os.Create(p)
	zw := gzip.NewWriter(f)
	zw.Write(data)
	zw.Close()
	f.Close()
	rec, err := Load(p)
	if err != nil || rec.Len() != 5 || rec.Name != "small" {
		t.Fatalf("Load(gz) = %v, %v", rec, err)
	}
}

func sharedSpaces(t testing.TB) string {
	dir := filepath.Join("..", "..", "..", "shared", "spaces")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("skipping: %s not found (the shared search spaces sit beside the checkout)", dir)
	}
	return dir
}

// The A100 convolution space is shipped both as a cache and as T4 results:
// both readers must agree on every config.
func TestCacheAndT4Agree(t *testing.T) {
	t.Parallel()
	dir := sharedSpaces(t)
	cache, err := Load(filepath.Join(dir, "convolution_milo_A100.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	t4, err := Load(filepath.Join(dir, "convolution_milo_A100_T4.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if cache.Len() != t4.Len() {
		t.Fatalf("cache has %d configs, T4 %d", cache.Len(), t4.Len())
	}
	for k, a := range cache.trials {
		b, ok := t4.Trial(k)
		if !ok {
			t.Fatalf("T4 lacks %q", k)
		}
		if a.Status != b.Status || a.Time != b.Time || math.Abs(a.Cost-b.Cost) > 0.01*a.Cost+0.01 {
			t.Fatalf("%q: cache %s %v %.3fs, T4 %s %v %.3fs", k, a.Status, a.Time, a.Cost, b.Status, b.Time, b.Cost)
		}
	}
	o1, _ := cache.Optimum()
	o2, _ := t4.Optimum()
	if o1 != o2 {
		t.Errorf("optimum %v vs %v", o1, o2)
	}
}

func TestLoadAllShared(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping under -short: parses every shared space, a minute and a half under the race detector; the full run does")
	}
	t.Parallel()
	dir := sharedSpaces(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json.gz"))
	for _, f := range files {
		rec, err := Load(f)
		if err != nil {
			t.Fatalf("Load(%s): %v", f, err)
		}
		opt, _ := rec.Optimum()
		if rec.Len() == 0 || opt <= 0 {
			t.Errorf("%s: %d configs, optimum %v", f, rec.Len(), opt)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/small_cache.json", "testdata/small_t4.json"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"cache":{}}`))
	f.Add([]byte(`{"tune_params_keys":["p"],"tune_params":{"p":[1,2]},"cache":{"1":{"p":1,"time":2.5,"nvml_energy":0.5},"2":{"p":2,"time":3,"nvml_power":-1}}}`))
	f.Add([]byte(`{"results":[{"configuration":{"a":true}}]}`))
	f.Add([]byte(`{"problem_size":20000000,"objective":"score","tune_params_keys":["p"],"tune_params":{"p":[1,2,3]},"cache":{"1":{"p":1,"score":-4,"timestamp":"2023-01-24 01:03:17.677311+00:00","GFLOP/s":3},"2":{"p":2,"score":0,"compile_time":1},"3":{"p":3,"score":"InvalidConfig"}}}`))
	f.Add([]byte(`{"objective":"GFLOP/s","objective_higher_is_better":true,"problem_size":"n","tune_params_keys":["p"],"tune_params":{"p":[1,2]},"cache":{"1":{"p":1,"GFLOP/s":10},"2":{"p":2,"GFLOP/s":20}}}`))
	f.Add([]byte(`{"results":[{"timestamp":"2023-12-22T09:54:05Z","configuration":{"a":1.5},"times":{"compilation":1,"validation":2,"runtimes":[1]},"invalidity":"correct","measurements":[{"name":"score","value":-1},{"name":"GB/s","value":3}],"objectives":["score"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := Parse("fuzz.json", data)
		if err != nil {
			return
		}
		sp, err := rec.Space(evaluate.Problem{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range sp.All() {
			tr, err := rec.Evaluate(context.Background(), c, evaluate.Problem{})
			if err != nil {
				t.Fatalf("Evaluate(%v): %v", c, err)
			}
			if tr.OK() && !(tr.Time > 0) || math.IsInf(tr.Time, 0) {
				t.Fatalf("Evaluate(%v): valid trial with time %v", c, tr.Time)
			}
			if !(tr.EnergyMJ >= 0) || math.IsInf(tr.EnergyMJ, 0) || (!tr.OK() && tr.EnergyMJ != 0) {
				t.Fatalf("Evaluate(%v): energy %v mJ for status %s", c, tr.EnergyMJ, tr.Status)
			}
		}
	})
}

func TestEnergyColumns(t *testing.T) {
	rec, err := Load("testdata/synthetic_energy.json")
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := rec.Trial("32,8,8,300")
	if !ok || math.Abs(tr.EnergyMJ-624.5156) > 1e-9 || tr.PowerW != 262.105 {
		t.Fatalf("trial %+v", tr)
	}
	// Power alone gives energy as power × time; a bad value names the cell.
	data := `{"tune_params_keys":["p"],"tune_params":{"p":[1,2]},"cache":{"1":{"p":1,"time":2.5,"nvml_power":100},"2":{"p":2,"time":3,"nvml_energy":%s}}}`
	rec, err = Parse("e.json", []byte(fmt.Sprintf(data, "0.3")))
	if err != nil {
		t.Fatal(err)
	}
	if tr, _ := rec.Trial("1"); tr.EnergyMJ != 250 {
		t.Errorf("energy from power: %v mJ, want 250", tr.EnergyMJ)
	}
	_, err = Parse("e.json", []byte(fmt.Sprintf(data, "-1")))
	if err == nil || !strings.Contains(err.Error(), `e.json: cache["2"]: nvml_energy: -1 is not a positive number`) {
		t.Errorf("negative energy: %v", err)
	}
}
