package cli

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
)

func TestExportJobs(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	// sgemm has trials at two problem sizes.
	_, errs, code := f.ctl(t, "export", "sgemm")
	if code != 2 {
		t.Errorf("export of two jobs = %d, want 2 (stderr %q)", code, errs)
	}
	mustContain(t, "stderr", errs, "sgemm has trials of 2 jobs (256,256,256 on cpu/test; 512,512,512 on cpu/test); pick one")

	out, errs, code := f.ctl(t, "export", "sgemm", "--problem", "256,256,256", "--device", "cpu/test")
	if code != 0 {
		t.Fatalf("export = %d, want 0 (stderr %q)", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc["results"].([]any)) != 2 {
		t.Errorf("export has %d results, want 2", len(doc["results"].([]any)))
	}

	_, errs, code = f.ctl(t, "export", "sgemm", "--problem", "1,1")
	if code != 4 {
		t.Errorf("export of no trials = %d, want 4 (stderr %q)", code, errs)
	}
	_, errs, code = f.ctl(t, "export", "sgemm", "--format", "t1")
	if code != 2 {
		t.Errorf("export --format t1 = %d, want 2 (stderr %q)", code, errs)
	}
}

func TestT4Results(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 1, 12, 0, 0, 5, time.UTC)
	trials := []api.Trial{
		{Key: "16,True,tiled,-0.5,1e-05", Status: "ok", TimeMS: 4.25, TimesMS: []float64{4.2, 4.3}, At: at},
		{Key: "32,False,0x10,007,", Status: "wrong_result", At: at},
		{Key: "8,True,a b,1.0,nan", Status: "invalid"},
		// Measured by quasimd: the cost is the benchmark phase; energy and
		// power under the NVML observer's names.
		{Key: "1,True,x,2.0,0", Status: "ok", TimeMS: 2, CostS: 0.5, EnergyMJ: 300, PowerW: 150, At: at},
		// Imported: its phases and observables as recorded.
		{Key: "2,True,x,2.0,0", Status: "runtime", CostS: 1, At: at,
			PhasesMS:    map[string]float64{"compilation": 900, "framework": 90, "benchmark": 10, "validation": 3, "search_algorithm": 0.5},
			Observables: map[string]float64{"GFLOP/s": 1234.5, "GB/s": 7, "time_spent": 2}},
	}
	doc, err := t4Results([]string{"bx", "unroll", "kind", "f", "eps"}, trials, at)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(doc)
	want := `{"schema_version":"1.0.0","metadata":{"timeunit":"miliseconds"},"results":[` +
		`{"timestamp":"2025-03-01T12:00:00.000000005Z","configuration":{"bx":16,"unroll":true,"kind":"tiled","f":-0.5,"eps":1e-05},` +
		`"times":{"compilation":0,"framework":0,"search_algorithm":0,"validation":0,"runtimes":[4.2,4.3]},"invalidity":"correct","correctness":1,` +
		`"measurements":[{"name":"time","value":4.25,"unit":"ms"}],"objectives":["time"]},` +
		`{"timestamp":"2025-03-01T12:00:00.000000005Z","configuration":{"bx":32,"unroll":false,"kind":"0x10","f":"007","eps":""},` +
		`"times":{"compilation":0,"framework":0,"search_algorithm":0,"validation":0,"runtimes":[]},"invalidity":"correctness","correctness":0,` +
		`"measurements":[{"name":"time","value":"wrong_result","unit":"ms"}],"objectives":["time"]},` +
		`{"timestamp":"2025-03-01T12:00:00.000000005Z","configuration":{"bx":8,"unroll":true,"kind":"a b","f":1.0,"eps":"nan"},` +
		`"times":{"compilation":0,"framework":0,"search_algorithm":0,"validation":0,"runtimes":[]},"invalidity":"constraints","correctness":0,` +
		`"measurements":[{"name":"time","value":"InvalidConfig","unit":"ms"}],"objectives":["time"]},` +
		`{"timestamp":"2025-03-01T12:00:00.000000005Z","configuration":{"bx":1,"unroll":true,"kind":"x","f":2.0,"eps":0},` +
		`"times":{"compilation":0,"benchmark":500,"framework":0,"search_algorithm":0,"validation":0,"runtimes":[]},"invalidity":"correct","correctness":1,` +
		`"measurements":[{"name":"time","value":2,"unit":"ms"},{"name":"nvml_energy","value":0.3,"unit":""},{"name":"nvml_power","value":150,"unit":""}],"objectives":["time"]},` +
		`{"timestamp":"2025-03-01T12:00:00.000000005Z","configuration":{"bx":2,"unroll":true,"kind":"x","f":2.0,"eps":0},` +
		`"times":{"compilation":900,"benchmark":10,"framework":90,"search_algorithm":0.5,"validation":3,"runtimes":[]},"invalidity":"runtime","correctness":0,` +
		`"measurements":[{"name":"time","value":"RuntimeFailedConfig","unit":"ms"},{"name":"GB/s","value":7,"unit":""},{"name":"GFLOP/s","value":1234.5,"unit":""},{"name":"time_spent","value":2,"unit":"ms"}],"objectives":["time"]}]}`
	if string(got) != want {
		t.Errorf("t4Results =\n%s\nwant\n%s", got, want)
	}

	if _, err := t4Results([]string{"a", "b"}, []api.Trial{{Key: "1,2,3", Status: "ok"}}, at); err == nil {
		t.Errorf("t4Results with a key of 3 values for 2 params: no error")
	}
}
