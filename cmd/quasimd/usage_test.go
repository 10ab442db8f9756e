package main

import (
	"strings"
	"testing"
)

// Bad --problem values are usage errors (exit 2) naming what is wrong, and
// --log-format console writes no colour codes where stderr is no terminal.
func TestUsageErrorsAndConsoleLog(t *testing.T) {
	spec := "name: sgemm\nevaluator: builtin:sgemm\nproblems: [\"64,64,64\"]\nschedule: \"@every 1h\"\nbudget: {evals: 2}\n"
	d := start(t, newDir(t, map[string]string{"sgemm.yaml": spec}), "--log-format", "console")
	tests := []struct {
		problem, want string
	}{
		{"1,2", `kernel "sgemm" has 3 dims (m, n, k), got 2`},
		{"abc", `problem "abc"`},
	}
	for _, tt := range tests {
		out, errs, code := d.ctl("config", "sgemm", "--problem", tt.problem)
		if code != 2 || !strings.Contains(errs, tt.want) {
			t.Errorf("config sgemm --problem %s = exit %d, stderr %q, stdout %q; want exit 2 and %q", tt.problem, code, errs, out, tt.want)
		}
	}
	d.stop()
	if log := d.stderr.String(); strings.Contains(log, "\x1b[") || !strings.Contains(log, "INF") {
		t.Errorf("console log into a buffer has colour codes or no INF level:\n%q", tail(log, 600))
	}
}
