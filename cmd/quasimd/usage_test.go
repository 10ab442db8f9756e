package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bad --problem values are usage errors (exit 2) naming what is wrong, and
// --log-format console writes no colour codes where stderr is no terminal.
func TestUsageErrorsAndConsoleLog(t *testing.T) {
	t.Parallel()
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

// A kernels path that is a file, or one asked for that is not there,
// exits 78 (EX_CONFIG) naming it; before, the first ran with no kernels
// and the second tuned the builtins. A missing default still means the
// builtins, and an empty directory given is fine. A prior pack given and
// missing, or one that does not decode, exits 78 too, naming the file.
func TestKernelsPath(t *testing.T) {
	t.Parallel()
	qd, _ := binaries(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "sgemm.yaml")
	if err := os.WriteFile(file, []byte("name: sgemm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.qprior"), []byte(`{"format": "quasim-priors", "sources": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(env []string, args ...string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, qd, append([]string{"--socket", filepath.Join(dir, "q.sock"), "--state-dir", filepath.Join(dir, "state"), "--lock-dir", ""}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		return 0, string(out)
	}
	for _, tt := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"a file", nil, []string{"--kernels", file}, "a file, not a directory of kernel specs"},
		{"a missing directory", nil, []string{"--kernels", filepath.Join(dir, "kernel.d")}, "no such directory"},
		{"a missing directory from the environment", []string{"QUASIMD_KERNELS=" + filepath.Join(dir, "nope")}, nil, "no such directory"},
		{"a missing prior pack", nil, []string{"--priors", filepath.Join(dir, "hub.qprior")}, "hub.qprior: no such file"},
		{"a damaged prior pack", nil, []string{"--priors", dir}, "priors " + filepath.Join(dir, "bad.qprior") + ": not a prior pack"},
	} {
		code, out := run(tt.env, tt.args...)
		if code != exitConfig || !strings.Contains(out, tt.want) {
			t.Errorf("%s: exit %d, want %d and %q:\n%s", tt.name, code, exitConfig, tt.want, out)
		}
	}
}
