package certs_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/quasim/quasim/certs"
)

func TestReport(t *testing.T) {
	t.Parallel()
	key, _ := testKey(1)
	tests := []struct {
		name   string
		modify func(c *certs.Certificate)
		want   []string
		absent []string
	}{
		{
			name: "passing",
			want: []string{
				"certificate: PASS (5 of 5 checks passed)",
				"kernel:     sgemm", "problem:    1024,1024,1024", "device:     cpu/AMD EPYC 7B13/avx2/2c",
				"cpu_model = AMD EPYC 7B13",
				"config: 64,8,2,fp32\n  block = 8\n  precision = fp32\n  tile = 64\n  unroll = 2\n",
				"issued at:  2025-01-02T03:04:05.123456789Z",
				"issuer:     ed25519:",
				"  PASS parity\n", "  PASS determinism\n", "  PASS error_bound\n",
				"max_abs_err = 8.125e-07", "tolerance = 1e-05", "worst = case 2, element (17, 3)",
				"margin 12.3x (tolerance 1e-05 / max_abs_err 8.125e-07)",
				"margin 75.1x (bound 6.1e-05 / measured_err 8.125e-07)",
				"constraints = [tile % block == 0, tile <= 128 && unroll < 8]",
				"latency: 5 samples", "median:     1.25 ms", "p95:        1.5 ms", "95% CI:     1.2 - 1.3 ms", "range:      1.2 - 1.5 ms",
			},
			absent: []string{"FAIL", "max_rel_err 2.5e-07)", "over the"},
		},
		{
			name: "failing checks",
			modify: func(c *certs.Certificate) {
				c.Checks[0].Passed = false
				c.Checks[0].Results["max_abs_err"] = 2e-05
				c.Checks[2].Passed = false
				c.Checks[2].Results["measured_err"] = 1.22e-04
				c.Checks[2].Note = "error exceeds the bound"
			},
			want: []string{
				"certificate: FAIL (3 of 5 checks passed)",
				"  FAIL parity\n", "  FAIL error_bound\n", "  PASS determinism\n",
				"margin 0.5x (tolerance 1e-05 / max_abs_err 2e-05): over the tolerance",
				"margin 0.5x (bound 6.1e-05 / measured_err 0.000122): over the bound",
				"note: error exceeds the bound",
			},
		},
		{
			name: "error budget",
			modify: func(c *certs.Certificate) {
				c.Checks = append(c.Checks, certs.Check{Name: "error_budget", Passed: false,
					Inputs:  map[string]any{"kind": "rel", "budget": 1e-05, "precision_map": map[string]any{"acc": "fp16"}},
					Results: map[string]any{"bound": 2e-05, "measured_err": 1e-06}})
			},
			want: []string{
				"  FAIL error_budget\n",
				"margin 0.5x (budget 1e-05 / bound 2e-05): over the budget",
				"margin 10x (budget 1e-05 / measured_err 1e-06)",
				"precision_map = {acc: fp16}",
			},
		},
		{
			name: "relative tolerance",
			modify: func(c *certs.Certificate) {
				c.Checks[0].Results["tolerance_kind"] = "rel"
				c.Checks[0].Results["tolerance"] = 1e-04
			},
			want:   []string{"margin 400x (tolerance 0.0001 / max_rel_err 2.5e-07)"},
			absent: []string{"/ max_abs_err", "/ max_ulp"},
		},
		{
			name: "ulp tolerance, exact result",
			modify: func(c *certs.Certificate) {
				c.Checks[0].Results = map[string]any{"tolerance_kind": "ulp", "tolerance": 4, "max_ulp": 0}
			},
			want: []string{"margin unbounded: the error is 0 (tolerance 4 / max_ulp 0)"},
		},
		{
			name: "no tolerance kind: every error",
			modify: func(c *certs.Certificate) {
				delete(c.Checks[0].Results, "tolerance_kind")
			},
			want: []string{"/ max_abs_err 8.125e-07)", "/ max_rel_err 2.5e-07)", "/ max_ulp 3)"},
		},
		{
			name: "no margin keys",
			modify: func(c *certs.Certificate) {
				c.Checks[0].Results = map[string]any{"ok": true}
				c.Checks[2].Results = map[string]any{"bound": "n/a"}
			},
			want:   []string{"ok = true", "bound = n/a"},
			absent: []string{"margin"},
		},
		{
			name: "no checks",
			modify: func(c *certs.Certificate) {
				c.Checks = nil
				c.Latency.TimesMS = nil
			},
			want:   []string{"certificate: FAIL (0 of 0 checks passed)", "checks:\n  none\n"},
			absent: []string{"range:"},
		},
		{
			name: "hostile strings are quoted",
			modify: func(c *certs.Certificate) {
				c.Job.Kernel = "sgemm\x1b[2J"
				c.Config["evil\n"] = "x\ry"
			},
			want:   []string{`kernel:     "sgemm\x1b[2J"`, `"evil\n" = "x\ry"`},
			absent: []string{"\x1b", "\r"},
		},
		{
			name: "long lists are cut",
			modify: func(c *certs.Certificate) {
				c.Checks[1].Results["per_run"] = make([]float64, 25)
			},
			want: []string{"per_run = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ... (25 values)]"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := sampleCert()
			if tt.modify != nil {
				tt.modify(c)
			}
			signed(t, c, key)
			var b bytes.Buffer
			if err := c.Report(&b); err != nil {
				t.Fatalf("Report: %v", err)
			}
			out := b.String()
			if !strings.Contains(out, "id:         "+c.ID) {
				t.Errorf("Report does not show id %s", c.ID)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("Report lacks %q:\n%s", w, out)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(out, a) {
					t.Errorf("Report holds %q:\n%s", a, out)
				}
			}
		})
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("disk full")
	}
	w.n--
	return len(p), nil
}

func TestReportWriteError(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 3, 20} {
		if err := sampleCert().Report(&failWriter{n: n}); err == nil || err.Error() != "disk full" {
			t.Errorf("Report(writer failing after %d writes) = %v, want disk full", n, err)
		}
	}
}
