package evaluate

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestVerifySettingsWithDefaults(t *testing.T) {
	t.Parallel()
	base := VerifySettings{Repeats: 3, Nondeterministic: "reject", Seeds: []uint64{1, 2, 3}, Seed: 1}
	with := func(f func(*VerifySettings)) VerifySettings {
		s := base
		s.Seeds = slices.Clone(base.Seeds)
		f(&s)
		return s
	}
	tests := []struct {
		name string
		in   VerifySettings
		want VerifySettings
	}{
		{"zero", VerifySettings{}, with(func(s *VerifySettings) { s.Tolerance, s.Value = "rel", 1e-4 })},
		{"abs", VerifySettings{Tolerance: "abs"}, with(func(s *VerifySettings) { s.Tolerance, s.Value = "abs", 1e-3 })},
		{"ulp", VerifySettings{Tolerance: "ulp"}, with(func(s *VerifySettings) { s.Tolerance, s.Value = "ulp", 64 })},
		{"set", VerifySettings{Tolerance: "abs", Value: 0.5, Repeats: 1, Nondeterministic: "certify", Seeds: []uint64{9}, Seed: 7},
			VerifySettings{Tolerance: "abs", Value: 0.5, Repeats: 1, Nondeterministic: "certify", Seeds: []uint64{9}, Seed: 7}},
	}
	for _, tt := range tests {
		got := tt.in.WithDefaults()
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: WithDefaults(%+v) = %+v, want %+v", tt.name, tt.in, got, tt.want)
		}
	}
	// The defaults' seeds are a copy: changing them changes no later default.
	s := VerifySettings{}.WithDefaults()
	s.Seeds[0] = 99
	if got := (VerifySettings{}).WithDefaults().Seeds; !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("WithDefaults().Seeds after a caller changed a copy = %v", got)
	}
}

func TestVerifySettingsValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    VerifySettings
		want string // "" for valid
	}{
		{"zero", VerifySettings{}, ""},
		{"full", VerifySettings{Tolerance: "ulp", Value: 4, Repeats: 5, Nondeterministic: "certify"}, ""},
		{"tolerance", VerifySettings{Tolerance: "percent"}, "tolerance"},
		{"negative value", VerifySettings{Value: -1}, "value"},
		{"nan value", VerifySettings{Value: math.NaN()}, "value"},
		{"inf value", VerifySettings{Value: math.Inf(1)}, "value"},
		{"repeats", VerifySettings{Repeats: -1}, "repeats"},
		{"policy", VerifySettings{Nondeterministic: "ignore"}, "nondeterministic"},
	}
	for _, tt := range tests {
		err := tt.s.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: Validate() = %v, want nil", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: Validate() = %v, want an error naming %q", tt.name, err, tt.want)
		}
	}
}

func TestVerifyReportPassed(t *testing.T) {
	t.Parallel()
	ok := VerifyReport{Parity: ParityResult{Passed: true}, Determinism: DeterminismResult{Passed: true}, ErrorBound: ErrorBoundResult{Passed: true}}
	tests := []struct {
		name string
		f    func(*VerifyReport)
		want bool
	}{
		{"all", func(*VerifyReport) {}, true},
		{"parity", func(r *VerifyReport) { r.Parity.Passed = false }, false},
		{"determinism", func(r *VerifyReport) { r.Determinism.Passed = false }, false},
		{"error bound", func(r *VerifyReport) { r.ErrorBound.Passed = false }, false},
		{"error bound not checked", func(r *VerifyReport) { r.ErrorBound = ErrorBoundResult{NotChecked: "no outputs"} }, true},
		{"error bound not checked, parity failed", func(r *VerifyReport) {
			r.ErrorBound = ErrorBoundResult{NotChecked: "no outputs"}
			r.Parity.Passed = false
		}, false},
	}
	for _, tt := range tests {
		r := ok
		tt.f(&r)
		if got := r.Passed(); got != tt.want {
			t.Errorf("%s: Passed() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestLatencyStats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		times         []float64
		median, p95   float64
		ciLow, ciHigh float64 // bounds the CI must lie within
		exactCI       bool
	}{
		{name: "none"},
		{name: "one", times: []float64{2.5}, median: 2.5, p95: 2.5, ciLow: 2.5, ciHigh: 2.5, exactCI: true},
		{name: "constant", times: []float64{3, 3, 3, 3}, median: 3, p95: 3, ciLow: 3, ciHigh: 3, exactCI: true},
		// sorted 1..10: median 5.5; p95 at rank 0.95*9 = 8.55 -> 9 + 0.55 = 9.55.
		{name: "ramp", times: []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, median: 5.5, p95: 9.55, ciLow: 1, ciHigh: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := LatencyStats(tt.times, 1)
			if !slices.Equal(r.TimesMS, tt.times) {
				t.Errorf("LatencyStats(%v).TimesMS = %v, want the input in order", tt.times, r.TimesMS)
			}
			if !near(r.MedianMS, tt.median) || !near(r.P95MS, tt.p95) {
				t.Errorf("LatencyStats(%v) median, p95 = %v, %v, want %v, %v", tt.times, r.MedianMS, r.P95MS, tt.median, tt.p95)
			}
			if tt.exactCI && (r.CILowMS != tt.ciLow || r.CIHighMS != tt.ciHigh) {
				t.Errorf("LatencyStats(%v) CI = [%v, %v], want [%v, %v]", tt.times, r.CILowMS, r.CIHighMS, tt.ciLow, tt.ciHigh)
			}
			if len(tt.times) > 0 && !(tt.ciLow <= r.CILowMS && r.CILowMS <= r.MedianMS && r.MedianMS <= r.CIHighMS && r.CIHighMS <= tt.ciHigh) {
				t.Errorf("LatencyStats(%v) CI = [%v, %v] around median %v, want within [%v, %v]", tt.times, r.CILowMS, r.CIHighMS, r.MedianMS, tt.ciLow, tt.ciHigh)
			}
		})
	}
}

func TestLatencyStatsSeeded(t *testing.T) {
	t.Parallel()
	times := []float64{5.1, 4.9, 5.3, 7.2, 5.0, 4.8, 5.2, 9.9, 5.05, 5.15, 4.95}
	a, b := LatencyStats(times, 7), LatencyStats(times, 7)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("LatencyStats with the same seed differs: %+v vs %+v", a, b)
	}
	// The interval narrows around the median as samples agree: with 11 tight
	// samples and two outliers it stays inside the tight cluster.
	if a.CILowMS < 4.8 || a.CIHighMS > 5.3 {
		t.Errorf("LatencyStats(%v) CI = [%v, %v], want within the cluster [4.8, 5.3]", times, a.CILowMS, a.CIHighMS)
	}
	// The input is not reordered.
	if times[0] != 5.1 || times[7] != 9.9 {
		t.Errorf("LatencyStats reordered its input: %v", times)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }
