package evaluate

import (
	"testing"
	"time"
)

func TestRepsDefaults(t *testing.T) {
	tests := []struct {
		in, want Reps
	}{
		{Reps{}, Reps{Warmup: 1, Min: 3, Max: 50, MaxTime: 2 * time.Second, RelCI: 0.03}},
		{Reps{Warmup: -1}, Reps{Warmup: 0, Min: 3, Max: 50, MaxTime: 2 * time.Second, RelCI: 0.03}},
		{Reps{Min: 7, Max: 2}, Reps{Warmup: 1, Min: 7, Max: 7, MaxTime: 2 * time.Second, RelCI: 0.03}},
		{Reps{Warmup: 2, Min: 1, Max: 9, MaxTime: time.Second, RelCI: 0.1}, Reps{Warmup: 2, Min: 1, Max: 9, MaxTime: time.Second, RelCI: 0.1}},
	}
	for _, tt := range tests {
		if got := tt.in.WithDefaults(); got != tt.want {
			t.Errorf("%+v.WithDefaults() = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestRepsEnough(t *testing.T) {
	r := Reps{MaxTime: time.Hour}.WithDefaults()
	tests := []struct {
		times  []float64
		median float64
		enough bool
	}{
		{nil, 0, false},
		{[]float64{3}, 3, false},
		{[]float64{3, 1}, 2, false},
		{[]float64{5, 5, 5}, 5, true},
		{[]float64{1, 2, 3}, 2, false},
		{[]float64{10, 10, 10.05, 10.02, 9.99}, 10, true},                     // ±0.16%
		{[]float64{10, 12, 10, 12, 14}, 12, false},                            // ±27%
		{[]float64{10, 10.4, 9.6, 10.2}, 10.1, false},                         // ±3.6%
		{[]float64{10, 10.4, 9.6, 10.2, 10, 10.1, 9.9, 10.3, 30}, 10.1, true}, // ±2.4%: the outlier does not count
	}
	for _, tt := range tests {
		if got := Median(tt.times); got != tt.median {
			t.Errorf("Median(%v) = %v, want %v", tt.times, got, tt.median)
		}
		if got := r.Enough(tt.times); got != tt.enough {
			t.Errorf("Enough(%v) = %v, want %v", tt.times, got, tt.enough)
		}
	}
	// The caps end a noisy measurement: Max runs, or MaxTime of running.
	noisy := []float64{1, 9, 1, 9, 1, 9}
	if !(Reps{Max: 6}.WithDefaults()).Enough(noisy) {
		t.Error("6 runs with Max 6 are not enough")
	}
	if !(Reps{MaxTime: 30 * time.Millisecond}.WithDefaults()).Enough(noisy) {
		t.Error("30 ms of running with MaxTime 30ms is not enough")
	}
	if r.Enough(noisy) {
		t.Error("a noisy measurement under its caps is enough")
	}
}

func TestRepsNext(t *testing.T) {
	r := Reps{Max: 20, MaxTime: time.Second}.WithDefaults()
	tests := []struct {
		times []float64
		want  int
	}{
		{nil, 3},                               // Min first
		{[]float64{1}, 2},                      // the rest of Min
		{[]float64{1, 9, 5}, 3},                // then double
		{[]float64{1, 9, 1, 9, 1, 9, 1, 9}, 8}, // still doubling
		{[]float64{1, 9, 1, 9, 1, 9, 1, 9, 1, 9, 1, 9, 1, 9, 1, 9}, 4}, // within Max
		{[]float64{400, 300, 200}, 1},                                  // 100 ms left at 300 ms a run: one more
		{[]float64{5, 5, 5}, 0},                                        // narrow: enough
	}
	for _, tt := range tests {
		if got := r.Next(tt.times); got != tt.want {
			t.Errorf("Next(%v) = %d, want %d", tt.times, got, tt.want)
		}
	}
}

func TestRepsOutpaced(t *testing.T) {
	r := Reps{}.WithDefaults()
	tight := []float64{10, 10.1, 10.2}
	for _, tt := range []struct {
		times []float64
		best  float64
		want  bool
	}{
		{tight, 1, true},
		{tight, 0, false},                     // racing off
		{tight[:2], 1, false},                 // fewer than Min runs
		{tight, 8.5, false},                   // within RaceSlack of the best
		{[]float64{1, 10, 30}, 1, false},      // too noisy to tell
		{[]float64{0.5, 0.6, 0.55}, 1, false}, // faster than the best
	} {
		if got := r.Outpaced(tt.times, tt.best); got != tt.want {
			t.Errorf("Outpaced(%v, %v) = %v, want %v", tt.times, tt.best, got, tt.want)
		}
	}
}
