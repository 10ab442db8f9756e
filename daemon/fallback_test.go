package daemon

import (
	"testing"

	"github.com/quasim/quasim/certs"
)

// Only a passed error_budget check bounds what a runtime may observe:
// its bound when one above 0 was recorded, else the budget.
func TestBudgetLimit(t *testing.T) {
	check := func(passed bool, budget, bound any) certs.Check {
		return certs.Check{Name: "error_budget", Passed: passed,
			Inputs: map[string]any{"kind": "rel", "budget": budget}, Results: map[string]any{"bound": bound}}
	}
	for _, tc := range []struct {
		name   string
		checks []certs.Check
		limit  float64
		ok     bool
	}{
		{"no budget", []certs.Check{{Name: "parity", Passed: true}}, 0, false},
		{"failed", []certs.Check{check(false, 1e-3, 1e-4)}, 0, false},
		{"bound", []certs.Check{{Name: "parity", Passed: true}, check(true, 1e-3, 1e-4)}, 1e-4, true},
		{"zero bound", []certs.Check{check(true, 1e-3, 0.0)}, 1e-3, true},
		{"no bound", []certs.Check{check(true, 1e-5, nil)}, 1e-5, true},
		{"bound over the budget", []certs.Check{check(true, 1e-5, 1e-3)}, 1e-5, true},
	} {
		kind, limit, ok := budgetLimit(&certs.Certificate{Checks: tc.checks})
		if ok != tc.ok || limit != tc.limit || (ok && kind != "rel") {
			t.Errorf("%s: budgetLimit = %q %v %v, want %v %v", tc.name, kind, limit, ok, tc.limit, tc.ok)
		}
	}
}
