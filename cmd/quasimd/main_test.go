package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func buildDaemon(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "quasimd")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestOnceTunesBuiltin(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds and runs the binary")
	}
	bin := buildDaemon(t)
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "--once", "--budget", "4", "reduce")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("quasimd --once: %v\n%s", err, stderr.String())
	}
	tuned := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		var ev struct {
			Message string  `json:"message"`
			Kernel  string  `json:"kernel"`
			Evals   int     `json:"evals"`
			BestMS  float64 `json:"best_ms"`
			Config  string  `json:"config"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		if ev.Message == "job tuned" {
			tuned++
			if ev.Kernel != "reduce" || ev.Evals != 4 || ev.BestMS <= 0 || strings.Count(ev.Config, ",") != 3 {
				t.Errorf("job tuned event = %+v", ev)
			}
		}
	}
	if tuned != 3 {
		t.Errorf("%d jobs tuned, want reduce's 3 default problems:\n%s", tuned, stderr.String())
	}
}

func TestBadConfigExits2(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds and runs the binary")
	}
	bin := buildDaemon(t)
	tests := [][]string{{"--budget", "0"}, {"nosuchkernel"}, {"--log-level", "loud"}, {"--bogus"}}
	for _, args := range tests {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("quasimd %v: %v, want exit 2\n%s", args, err, stderr.String())
		}
	}
}
