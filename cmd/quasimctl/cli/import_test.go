package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/evaluate/replay"
)

var (
	smallCache = filepath.Join("..", "..", "..", "evaluate", "replay", "testdata", "small_cache.json")
	smallT4    = filepath.Join("..", "..", "..", "evaluate", "replay", "testdata", "small_t4.json")
)

// TestImportExportRoundTrip imports a Kernel Tuner cache, exports the
// stored trials as T4 and reads that back: the same keys, validity and times.
func TestImportExportRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	out, errs, code := f.ctl(t, "import", smallCache, "--kernel", "k")
	if code != 0 {
		t.Fatalf("import = %d, want 0 (stderr %q)", code, errs)
	}
	want := "imported " + smallCache + " into k (job k/64,64/nvidia/NVIDIA Test GPU, problem 64,64, device nvidia/NVIDIA Test GPU): 5 stored, 0 skipped\n"
	if out != want {
		t.Errorf("import = %q, want %q", out, want)
	}
	// Again: everything is already stored.
	out, _, code = f.ctl(t, "import", smallCache, "--kernel", "k", "--json")
	if code != 0 {
		t.Fatalf("import --json = %d, want 0", code)
	}
	if got, want := decodeStrict[api.ImportResponse](t, out), (api.ImportResponse{Job: "k/64,64/nvidia/NVIDIA Test GPU", Skipped: 5}); got != want {
		t.Errorf("import --json = %+v, want %+v", got, want)
	}

	orig, err := replay.Load(smallCache)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "k_t4.json")
	out, errs, code = f.ctl(t, "export", "k", "--format", "t4", "-o", file)
	if code != 0 {
		t.Fatalf("export = %d, want 0 (stderr %q)", code, errs)
	}
	if want := "exported 5 trials of k to " + file + "\n"; out != want {
		t.Errorf("export = %q, want %q", out, want)
	}
	back, err := replay.Load(file)
	if err != nil {
		t.Fatalf("replay.Load(export): %v", err)
	}
	sameRecording(t, back, orig)

	// To stdout, the same document.
	out, _, code = f.ctl(t, "export", "k")
	if code != 0 {
		t.Fatalf("export to stdout = %d, want 0", code)
	}
	b, _ := os.ReadFile(file)
	if out != string(b) {
		t.Errorf("export to stdout differs from export -o")
	}
	back, err = replay.Parse("stdout.json", []byte(out))
	if err != nil {
		t.Fatalf("replay.Parse(export): %v", err)
	}
	sameRecording(t, back, orig)
}

// sameRecording checks that got holds the keys of want with the same
// validity, times and repetitions.
func sameRecording(t *testing.T, got, want *replay.Recording) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Errorf("round trip has %d configs, want %d", got.Len(), want.Len())
	}
	sp, err := want.Space(emptyProblem)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sp.All() {
		key := sp.Key(c)
		w, _ := want.Trial(key)
		g, ok := got.Trial(key)
		if !ok {
			t.Errorf("round trip lost key %q", key)
			continue
		}
		if g.OK() != w.OK() || g.Time != w.Time || !slices.Equal(g.Times, w.Times) {
			t.Errorf("round trip of %q = %s %v %v, want %s %v %v", key, g.Status, g.Time, g.Times, w.Status, w.Time, w.Times)
		}
	}
	gt, gk := got.Optimum()
	wt, wk := want.Optimum()
	if gt != wt || gk != wk {
		t.Errorf("round trip optimum = %v %q, want %v %q", gt, gk, wt, wk)
	}
}

func TestImportT4(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	// A T4 file records neither problem nor device.
	_, errs, code := f.ctl(t, "import", smallT4, "--kernel", "k")
	if code != 2 {
		t.Errorf("import T4 without --problem = %d, want 2 (stderr %q)", code, errs)
	}
	mustContain(t, "stderr", errs, "records no problem size; pass --problem")
	_, errs, code = f.ctl(t, "import", smallT4, "--kernel", "k", "--problem", "64,64")
	if code != 2 {
		t.Errorf("import T4 without --device = %d, want 2 (stderr %q)", code, errs)
	}
	mustContain(t, "stderr", errs, "records no device; pass --device")

	out, errs, code := f.ctl(t, "import", smallT4, "--kernel", "k", "--problem", "8,8", "--device", "cpu/x", "--json")
	if code != 0 {
		t.Fatalf("import T4 = %d, want 0 (stderr %q)", code, errs)
	}
	if got, want := decodeStrict[api.ImportResponse](t, out), (api.ImportResponse{Job: "k/8,8/cpu/x", Stored: 3}); got != want {
		t.Errorf("import T4 = %+v, want %+v", got, want)
	}
	f.mu.Lock()
	stored := slices.Clone(f.trials["k"])
	f.mu.Unlock()
	var keys []string
	for _, tr := range stored {
		keys = append(keys, tr.Key)
		if tr.Problem != "8,8" || tr.Device != "cpu/x" || tr.At.IsZero() {
			t.Errorf("stored trial %+v, want problem 8,8, device cpu/x and a time", tr)
		}
	}
	slices.Sort(keys)
	if want := []string{"16,0.5,a", "32,0.5,a", "64,1.0,b"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("stored keys %q, want %q", keys, want)
	}

	_, errs, code = f.ctl(t, "import", smallT4, "--kernel", "nope", "--problem", "8,8", "--device", "cpu/x")
	if code != 4 {
		t.Errorf("import into an unknown kernel = %d, want 4 (stderr %q)", code, errs)
	}
}

func TestImportBatches(t *testing.T) {
	t.Parallel()
	n := importBatch + 500
	cache := map[string]any{}
	var bx []int
	for i := range n {
		bx = append(bx, i)
		cache[strconv.Itoa(i)] = map[string]any{"time": 1 + float64(i)/1000, "times": []float64{1}}
	}
	b, err := json.Marshal(map[string]any{
		"device_name": "cpu/test", "kernel_name": "big", "problem_size": []int{7},
		"tune_params_keys": []string{"bx"}, "tune_params": map[string]any{"bx": bx}, "cache": cache,
	})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFakeDaemon(t)
	out, errs, code := f.ctl(t, "import", file, "--kernel", "k", "--json")
	if code != 0 {
		t.Fatalf("import = %d, want 0 (stderr %q)", code, errs)
	}
	if got, want := decodeStrict[api.ImportResponse](t, out), (api.ImportResponse{Job: "k/7/cpu/test", Stored: n}); got != want {
		t.Errorf("import = %+v, want %+v", got, want)
	}
	f.mu.Lock()
	posts := 0
	for _, q := range f.queries {
		if q == "POST /v1/kernels/k/import" {
			posts++
		}
	}
	f.mu.Unlock()
	if posts != 2 {
		t.Errorf("import of %d trials sent %d requests, want 2", n, posts)
	}
}
