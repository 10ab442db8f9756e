package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
)

func TestCycles(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	out, errs, code := f.ctl(t, "cycles", "sgemm")
	if code != 0 {
		t.Fatalf("cycles = %d, want 0 (stderr %q)", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := [][]string{
		{"ID", "PROBLEM", "DEVICE", "TRIGGER", "STATE", "STARTED", "DURATION", "EVALS", "BEST_MS", "BEST_KEY", "PROMOTED", "ALLOCATION", "WAITED", "NOTE"},
		append([]string{"3", "256,256,256", "cpu/test", "cron", "done"}, append(strings.Fields(fmtTime(fakeT0)), "1m30s", "20/20", "4.213", "16,True,tiled", "16,True,tiled", "quantumsearch=12,es=8", "-", "-")...),
	}
	if len(lines) != len(want) {
		t.Fatalf("cycles printed %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i := range want {
		if got := strings.Fields(lines[i]); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("cycles line %d = %q, want fields %q", i, got, want[i])
		}
	}

	out, _, code = f.ctl(t, "cycles", "sgemm", "--json")
	if code != 0 {
		t.Fatalf("cycles --json = %d, want 0", code)
	}
	wantJSON := api.Cycles{Kernel: "sgemm", Cycles: f.cycles["sgemm"]}
	if got := decodeStrict[api.Cycles](t, out); !reflect.DeepEqual(got, wantJSON) {
		t.Errorf("cycles --json = %+v, want %+v", got, wantJSON)
	}
}
