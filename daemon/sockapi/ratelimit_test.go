package sockapi

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
)

func TestLimiter(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	l := NewLimiter(2, 4, func() time.Time { return now })
	for i := range 4 {
		if err := l.take(7, 1); err != nil {
			t.Fatalf("take %d of a full bucket of 4: %v", i, err)
		}
	}
	err := l.take(7, 1)
	var rl *rateLimitError
	if !errors.Is(err, api.ErrRateLimited) || !errors.As(err, &rl) || rl.retry != 500*time.Millisecond {
		t.Fatalf("fifth take = %v, want rate limited, retry in 500ms", err)
	}
	if err := l.take(8, 4); err != nil {
		t.Errorf("another uid's bucket is its own: %v", err)
	}
	now = now.Add(time.Second) // two tokens back
	if err := l.take(7, 2); err != nil {
		t.Errorf("after 1s at 2/s: %v", err)
	}
	if err := l.take(7, 0.5); err == nil {
		t.Error("the refilled tokens were spent twice")
	}
	now = now.Add(time.Hour)
	if err := l.take(7, 5); !errors.Is(err, api.ErrRateLimited) || !strings.Contains(err.Error(), "over the burst") {
		t.Errorf("cost over the burst = %v", err)
	}
	if err := l.take(7, 4); err != nil {
		t.Errorf("a refused request spent tokens: %v", err)
	}
	// Off.
	if err := NewLimiter(-1, 1, time.Now).take(7, 1e9); err != nil {
		t.Errorf("rate < 0: %v", err)
	}
	// The buckets stay bounded: full ones are forgotten.
	for uid := range uint32(maxBuckets + 10) {
		l.take(uid+100, 1)
		now = now.Add(time.Second)
	}
	if len(l.buckets) > maxBuckets {
		t.Errorf("%d buckets, want at most %d", len(l.buckets), maxBuckets)
	}
}
