package daemon

import (
	"testing"
	"time"
)

// Failed cycles are tried again after retryMin, doubling with each failure
// in a row, never later than the job's schedule would run it.
func TestRetryWait(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		schedule string
		min      time.Duration
		want     []time.Duration // after 1, 2, 3 ... failures
	}{
		{"@every 1h", time.Minute, []time.Duration{1 * time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour}},
		{"@every 6h", 0, []time.Duration{time.Minute, 2 * time.Minute}}, // 0 is DefaultRetryMin
		{"*/5 * * * *", time.Minute, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 5 * time.Minute, 5 * time.Minute}},
		{"@every 30s", time.Minute, []time.Duration{time.Minute, time.Minute}}, // never below retryMin
	}
	for _, tt := range tests {
		s := &scheduler{cron: newCron(), retryMin: tt.min, clock: func() time.Time { return now }}
		id, err := s.cron.AddFunc(tt.schedule, func() {})
		if err != nil {
			t.Fatal(err)
		}
		j := &job{entry: id}
		for i, want := range tt.want {
			j.failures = i + 1
			if got := s.retryWait(j); got != want {
				t.Errorf("%s: retryWait after %d failures = %s, want %s", tt.schedule, j.failures, got, want)
			}
		}
	}
}
