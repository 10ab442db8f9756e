package client

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"3", 3 * time.Second},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"-1", 0},
		{"soon", 0},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.in, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func FuzzRetryAfter(f *testing.F) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, s := range []string{"", "0", "120", "Wed, 25 Nov 2026 12:01:00 GMT", "-5", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if d := retryAfter(v, now); d < 0 {
			t.Errorf("retryAfter(%q) = %v, negative", v, d)
		}
	})
}
