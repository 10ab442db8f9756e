package cli

import (
	"reflect"
	"slices"
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
	want := api.Trials{Kernel: "sgemm", Params: []string{"bx", "unroll", "kind"}, Trials: f.trials["sgemm"]}
	if got := decodeStrict[api.Trials](t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("trials --json = %+v, want %+v", got, want)
	}
}

func TestTrialsPages(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	all := f.trials["sgemm"]
	if len(all) < 2 {
		t.Fatalf("the fake daemon has %d sgemm trials, want 2 or more", len(all))
	}
	out, errs, code := f.ctl(t, "trials", "sgemm", "--limit", "1")
	if code != 0 || strings.Count(out, "\n") != 2 || !hasConfigRow(out, all[0].Key) {
		t.Fatalf("trials --limit 1 = %d\n%s%s", code, out, errs)
	}
	mustContain(t, "stderr", errs, "--cursor at-1 for the next page")
	out, errs, code = f.ctl(t, "trials", "sgemm", "--limit", "1", "--cursor", "at-1")
	if code != 0 || !hasConfigRow(out, all[1].Key) || hasConfigRow(out, all[0].Key) {
		t.Errorf("trials --cursor at-1 = %d\n%s%s", code, out, errs)
	}
	out, errs, code = f.ctl(t, "trials", "sgemm", "--all", "--json")
	if code != 0 || errs != "" {
		t.Fatalf("trials --all = %d %s", code, errs)
	}
	if got := decodeStrict[api.Trials](t, out); len(got.Trials) != len(all) || got.Next != "" {
		t.Errorf("trials --all --json: %d trials, next %q; want %d and none", len(got.Trials), got.Next, len(all))
	}
	for _, args := range [][]string{{"--limit", "0"}, {"--limit", "10001"}, {"--all", "--cursor", "at-1"}} {
		if _, errs, code := f.ctl(t, append([]string{"trials", "sgemm"}, args...)...); code != 2 {
			t.Errorf("trials %v = %d %q, want 2", args, code, errs)
		}
	}
}

// hasConfigRow says whether a row of the trials table starts with the
// values of the config key (a column per parameter).
func hasConfigRow(table, key string) bool {
	vals := strings.Split(key, ",")
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) >= len(vals) && slices.Equal(f[:len(vals)], vals) {
			return true
		}
	}
	return false
}
