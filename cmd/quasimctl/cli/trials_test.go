package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
)

func TestTrials(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	out, errs, code := f.ctl(t, "trials", "sgemm", "--problem", "256,256,256")
	if code != 0 {
		t.Fatalf("trials = %d, want 0 (stderr %q)", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("trials printed %d lines, want 3:\n%s", len(lines), out)
	}
	at := fmtTime(fakeT0)
	for i, want := range [][]string{
		{"bx", "unroll", "kind", "STATUS", "TIME_MS", "COST_S", "AT", "PROBLEM", "DEVICE", "CYCLE"},
		{"16", "True", "tiled", "ok", "4.213", "0.250", at, "256,256,256", "cpu/test", "3"},
		{"32", "False", "naive", "compile", "-", "1.50", at, "256,256,256", "cpu/test", "import"},
	} {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("trials line %d = %q, want fields %q", i, lines[i], want)
		}
	}

	out, _, code = f.ctl(t, "trials", "sgemm", "--json")
	if code != 0 {
		t.Fatalf("trials --json = %d, want 0", code)
	}
	want := api.Trials{Kernel: "sgemm", Trials: f.trials["sgemm"]}
	if got := decodeStrict[api.Trials](t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("trials --json = %+v, want %+v", got, want)
	}
}
