package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/internal/store"
)

// Observations: 429 with Retry-After once the uid's bucket is empty, and
// accepted again once it refilled; a big batch costs more.
func TestObservationsRateLimited(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	_, key := ts.serve(t, "sgemm", "128,128,128")
	now := time.Unix(1000, 0)
	ts.api.Observers = sockapi.NewLimiter(1, 3, func() time.Time { return now })
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
