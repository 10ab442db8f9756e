package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/store"
)

// A problem with the wrong number of dims is a bad request naming the
// kernel's dims, not the default config.
func TestConfigProblemDims(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	for _, path := range []string{"/v1/configs/sgemm?problem=1,2", "/v1/configs/sgemm?problem=1,2,3,4", "/v1/kernels/sgemm/trials?problem=1,2"} {
		status, body := ts.get(t, path, nil)
		var e api.Error
		json.Unmarshal(body, &e)
		if status != 400 || e.Code != api.CodeInvalidArgument || !strings.Contains(e.Error, "3 dims (m, n, k)") {
			t.Errorf("GET %s = %d %s, want 400 naming 3 dims (m, n, k)", path, status, body)
		}
	}
}

// A known path with another method is 405 with an Allow header; an unknown
// path stays 404.
func TestMethodNotAllowed(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	tests := []struct {
		method, path string
		status       int
		allow        string
	}{
		{"POST", "/v1/status", 405, "GET, HEAD"},
		{"DELETE", "/v1/configs/sgemm", 405, "GET, HEAD"},
		{"GET", "/v1/reload", 405, "POST"},
		{"GET", "/v1/kernels/sgemm/tune", 405, "POST"},
		{"GET", "/v1/nothing", 404, ""},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, "http://quasimd"+tt.path, nil)
		resp, err := ts.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e api.Error
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != tt.status || resp.Header.Get("Allow") != tt.allow || e.Error == "" {
			t.Errorf("%s %s = %d Allow %q %+v, want %d Allow %q with an error body", tt.method, tt.path, resp.StatusCode, resp.Header.Get("Allow"), e, tt.status, tt.allow)
		}
	}
}

// Revoking a certificate queues one re-verification; revoking it again
// changes nothing and queues none.
func TestRevokeTwice(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	job, key := ts.serve(t, "sgemm", "256,256,256")
	meta := store.CertMeta{ID: "c1", Key: key, TimeMS: 1.25, IssuedAt: time.Now()}
	if err := ts.st.Promote(job, store.Served{Key: key, TimeMS: 1.25, PromotedAt: time.Now()}, meta, []byte(`{"id":"c1"}`)); err != nil {
		t.Fatal(err)
	}
	// The job is running, so a re-verification is queued, not started.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ts.sched.mu.Lock()
	ts.sched.ctx = ctx
	j := ts.sched.jobs[job.String()]
	j.running = true
	ts.sched.mu.Unlock()
	revoke := func() api.RevokeResponse {
		resp, err := ts.client.Post("http://quasimd/v1/certs/c1/revoke", "application/json", strings.NewReader(`{"reason": "test"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rr api.RevokeResponse
		if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&rr) != nil {
			t.Fatalf("revoke = %d", resp.StatusCode)
		}
		return rr
	}
	queued := func() bool {
		ts.sched.mu.Lock()
		defer ts.sched.mu.Unlock()
		q := j.queued != nil
		j.queued = nil
		return q
	}
	if rr := revoke(); !rr.Requeued || rr.AlreadyRevoked || !queued() {
		t.Fatalf("first revoke = %+v, queued %v; want a re-verification queued", rr, !rr.Requeued)
	}
	if rr := revoke(); rr.Requeued || !rr.AlreadyRevoked || queued() {
		t.Errorf("second revoke = %+v; want already_revoked and nothing queued", rr)
	}
}
