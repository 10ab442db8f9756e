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
	}
	doc, err := t4Results([]string{"bx", "unroll", "kind", "f", "eps"}, trials, at)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(doc)
	want := `{"schema_version":"1.0.0","metadata":{"timeunit":"milliseconds"},"results":[` +
		`{"timestamp":"2025-03-01T12:00:00.000000005Z","configuration":{"bx":16,"unroll":true,"kind":"tiled","f":-0.5,"eps":1e-05},` +
		`"times":{"compilation":0,"framework":0,"search_algorithm":0,"validation":0,"runtimes":[4.2,4.3]},"invalidity":"correct","correctness":1,` +
		`"measurements":[{"name":"time","value":4.25,"unit":"ms"}],"objectives":["time"]},` +
		`{"timestamp":"2025-03-01T12:00:00.000000005Z","configuration":{"bx":32,"unroll":false,"kind":"0x10","f":"007","eps":""},` +
		`"times":{"compilation":0,"framework":0,"search_algorithm":0,"validation":0,"runtimes":[]},"invalidity":"correctness","correctness":0,` +
		`"measurements":[{"name":"time","value":"wrong_result","unit":"ms"}],"objectives":["time"]},` +
		`{"timestamp":"2025-03-01T12:00:00.000000005Z","configuration":{"bx":8,"unroll":true,"kind":"a b","f":1.0,"eps":"nan"},` +
		`"times":{"compilation":0,"framework":0,"search_algorithm":0,"validation":0,"runtimes":[]},"invalidity":"constraints","correctness":0,` +
		`"measurements":[{"name":"time","value":"InvalidConfig","unit":"ms"}],"objectives":["time"]}]}`
	if string(got) != want {
		t.Errorf("t4Results =\n%s\nwant\n%s", got, want)
	}

	if _, err := t4Results([]string{"a", "b"}, []api.Trial{{Key: "1,2,3", Status: "ok"}}, at); err == nil {
		t.Errorf("t4Results with a key of 3 values for 2 params: no error")
	}
}
