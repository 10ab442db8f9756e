package certs_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/quasim/quasim/certs"
)

// A check that was not made is neither passed nor failed: it round-trips
// through signing and verification, never counts as passed, and the report
// says NOT CHECKED with the reason.
func TestChecksNotMade(t *testing.T) {
	t.Parallel()
	key, pub := testKey(1)
	const why = "an exec harness reports a checksum, not its outputs"
	legacy := certs.Check{Name: "error_bound", Passed: true, Inputs: map[string]any{"formula": "none: " + why},
		Results: map[string]any{"bound": 0, "measured_err": 0, "max_ratio": 0}}
	tests := []struct {
		name    string
		extra   []certs.Check
		passed  bool
		summary string
	}{
		{"not checked", []certs.Check{{Name: "error_bound", NotChecked: why}}, true, "(1 of 1 checks made passed; 1 not made)"},
		{"issued before not_checked existed", []certs.Check{legacy}, true, "(1 of 1 checks made passed; 1 not made)"},
		{"only checks not made", nil, false, "(0 of 0 checks made passed; 1 not made)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := smallCert()
			if tt.extra == nil {
				c.Checks = []certs.Check{{Name: "parity", NotChecked: "a replay has no outputs"}}
			} else {
				c.Checks = append(c.Checks, tt.extra...)
			}
			got, err := certs.VerifyBytes(signed(t, c, key), pub)
			if err != nil {
				t.Fatalf("VerifyBytes = %v", err)
			}
			if got.Passed() != tt.passed {
				t.Errorf("Passed() = %v, want %v", got.Passed(), tt.passed)
			}
			var rep bytes.Buffer
			if err := got.Report(&rep); err != nil {
				t.Fatal(err)
			}
			out := rep.String()
			last := got.Checks[len(got.Checks)-1]
			if !strings.Contains(out, tt.summary) || !strings.Contains(out, "NOT CHECKED "+last.Name+"\n") ||
				!strings.Contains(out, "not made: ") || strings.Contains(out, "PASS "+last.Name+"\n") {
				t.Errorf("report:\n%s\nwant %q and %s NOT CHECKED with why", out, tt.summary, last.Name)
			}
		})
	}
	// A check cannot be both not made and passed.
	c := smallCert()
	c.Checks = append(c.Checks, certs.Check{Name: "error_bound", Passed: true, NotChecked: why})
	if _, err := certs.VerifyBytes(signed(t, c, key), pub); !errors.Is(err, certs.ErrMalformed) {
		t.Errorf("VerifyBytes(passed and not_checked) = %v, want ErrMalformed", err)
	}
}
