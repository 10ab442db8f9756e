package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/store"
)

func TestLimiter(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	l := newLimiter(2, 4, func() time.Time { return now })
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
	if err := newLimiter(-1, 1, time.Now).take(7, 1e9); err != nil {
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

// Observations: 429 with Retry-After once the uid's bucket is empty, and
// accepted again once it refilled; a big batch costs more.
func TestObservationsRateLimited(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	_, key := ts.serve(t, "sgemm", "128,128,128")
	now := time.Unix(1000, 0)
	ts.srv.observers = newLimiter(1, 3, func() time.Time { return now })
	post := func(n int) (*http.Response, api.Error) {
		lat := strings.TrimSuffix(strings.Repeat("0.5,", n), ",")
		body := fmt.Sprintf(`{"observations": [{"kernel": "sgemm", "problem": "128,128,128", "key": %q, "latencies_ms": [%s]}]}`, key, lat)
		resp, err := ts.client.Post("http://quasimd/v1/observations", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e api.Error
		json.NewDecoder(resp.Body).Decode(&e)
		return resp, e
	}
	for i := range 3 {
		if resp, e := post(1); resp.StatusCode != 200 {
			t.Fatalf("report %d = %d %+v", i, resp.StatusCode, e)
		}
	}
	resp, e := post(1)
	if resp.StatusCode != http.StatusTooManyRequests || e.Code != api.CodeRateLimited || resp.Header.Get("Retry-After") != "1" || !strings.Contains(e.Error, "uid ") {
		t.Fatalf("fourth report = %d %+v Retry-After %q, want 429 rate_limited naming the uid, Retry-After 1", resp.StatusCode, e, resp.Header.Get("Retry-After"))
	}
	now = now.Add(3 * time.Second)
	// 2,000 latencies: the request's token and two more.
	if resp, e := post(2000); resp.StatusCode != 200 {
		t.Fatalf("report of 2000 after refill = %d %+v", resp.StatusCode, e)
	}
	if resp, _ := post(1); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a report after a batch that emptied the bucket = %d, want 429", resp.StatusCode)
	}
	obs, err := ts.st.Observations(mustJob(t, ts, "sgemm", "128,128,128"), 0)
	if err != nil || len(obs) != 2003 {
		t.Errorf("stored %d observations (%v), want 2003: refused reports store nothing", len(obs), err)
	}
}

func mustJob(t *testing.T, ts *testServer, kernel, problem string) (key store.JobKey) {
	t.Helper()
	k, _ := ts.sched.kernel(kernel)
	for _, j := range k.jobs {
		if j.key.Problem == problem {
			return j.key
		}
	}
	t.Fatalf("no job %s %s", kernel, problem)
	return
}
