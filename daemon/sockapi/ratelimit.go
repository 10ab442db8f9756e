package sockapi

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/quasim/quasim/api"
)

// maxBuckets bounds the buckets kept: full ones are forgotten beyond it.
const maxBuckets = 4096

// Limiter is a token bucket per uid, for the Observe routes; rate <= 0
// lets everything through.
type Limiter struct {
	rate  float64
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[uint32]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewLimiter refills each uid's bucket of burst tokens at rate a second.
func NewLimiter(rate float64, burst int, now func() time.Time) *Limiter {
	return &Limiter{rate: rate, burst: float64(burst), now: now, buckets: map[uint32]*bucket{}}
}

// take spends cost tokens of uid's bucket, or returns an error wrapping
// api.ErrRateLimited that says when to retry; nothing is spent then.
func (l *Limiter) take(uid uint32, cost float64) error {
	if l == nil || l.rate <= 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.buckets[uid]
	if b == nil {
		if len(l.buckets) >= maxBuckets {
			l.forgetFull(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[uid] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
	b.at = now
	if cost > l.burst {
		return &rateLimitError{msg: fmt.Sprintf("a request of cost %.0f is over the burst of %.0f", cost, l.burst)}
	}
	if b.tokens < cost {
		wait := time.Duration((cost - b.tokens) / l.rate * float64(time.Second))
		return &rateLimitError{retry: wait, msg: fmt.Sprintf("uid %d may report %.3g observation requests a second (burst %.0f); retry in %s",
			uid, l.rate, l.burst, wait.Round(time.Millisecond))}
	}
	b.tokens -= cost
	return nil
}

// forgetFull drops the buckets that have refilled: forgetting them changes
// nothing.
func (l *Limiter) forgetFull(now time.Time) {
	for uid, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, uid)
		}
	}
}

// rateLimitError is a request over its uid's rate.
type rateLimitError struct {
	retry time.Duration
	msg   string
}

func (e *rateLimitError) Error() string { return api.ErrRateLimited.Error() + ": " + e.msg }
func (e *rateLimitError) Unwrap() error { return api.ErrRateLimited }

// setRetryAfter sets Retry-After, in whole seconds rounded up, when err
// says when to retry.
func setRetryAfter(w http.ResponseWriter, err error) {
	if e, ok := err.(*rateLimitError); ok && e.retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.retry.Seconds()))))
	}
}

// RetryLater is an api.ErrRateLimited whose answer says to retry after
// retry: a route that is busy now.
func RetryLater(retry time.Duration, format string, a ...any) error {
	return &rateLimitError{retry: retry, msg: fmt.Sprintf(format, a...)}
}
