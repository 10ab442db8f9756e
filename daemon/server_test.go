package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
	"github.com/quasim/quasim/internal/tuner"
)

// testServer serves the real handler on a real Unix socket, with the
// builtin kernels loaded and no cycles running.
type testServer struct {
	srv    *server
	st     *store.Store
	sched  *scheduler
	socket string
	client *http.Client
	api    *sockapi.Server
}

func newTestServer(t testing.TB, dir string) *testServer {
	t.Helper()
	return newTestServerOn(t, dir, storetest.New(t))
}

// newTestServerOn is newTestServer on the store st.
func newTestServerOn(t testing.TB, dir string, st *store.Store) *testServer {
	t.Helper()
	sched := &scheduler{
		dir: dir, st: st, cron: newCron(), log: zerolog.Nop(), clock: time.Now,
		tn: tuner.New(tuner.Config{Store: st, NewStrategy: defaultStrategy}),
	}
	return serveTest(t, sched, st)
}

// serveTest loads sched's kernels and serves them on a real Unix socket.
func serveTest(t testing.TB, sched *scheduler, st *store.Store) *testServer {
	t.Helper()
	sched.apply(sched.load())
	srv := &server{sched: sched, st: st, log: zerolog.Nop(), version: "test", started: time.Now(), lockDevice: (&devices{}).lock}
	srv.reload = func() api.ReloadResponse { return api.ReloadResponse{} }
	cfg := srv.apiConfig()
	cfg.Writers = sockapi.NewWriters(nil, "")
	srv.api = sockapi.New(cfg)
	sockDir, err := os.MkdirTemp("", "qt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "s")
	ln, err := sockapi.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.api.Serve(ln)
	t.Cleanup(func() { srv.api.Close() })
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConnsPerHost: 1,
	}}
	return &testServer{srv: srv, st: st, sched: sched, socket: sock, client: client, api: srv.api}
}

// handler is ts's API as net/http serves it, built from its server's
// fields as they are now (metrics, the planner), with its writers and
// limiter.
func (ts *testServer) handler() http.Handler {
	cfg := ts.srv.apiConfig()
	cfg.Writers, cfg.Observers = ts.api.Writers, ts.api.Observers
	return sockapi.New(cfg).Handler()
}

func (ts *testServer) get(t testing.TB, path string, hdr map[string]string) (int, []byte) {
	req, _ := http.NewRequest("GET", "http://quasimd"+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// serve stores a served config for the job of kernel at problem.
func (ts *testServer) serve(t testing.TB, kernel, problem string) (store.JobKey, string) {
	k, ok := ts.sched.kernel(kernel)
	if !ok {
		t.Fatalf("kernel %s not loaded", kernel)
	}
	for _, j := range k.jobs {
		if j.key.Problem == problem {
			all := j.spec.Space.All()
			key := j.spec.Space.Key(all[len(all)/2])
			tr := store.Trial{Key: key, Status: "ok", TimeMS: 1.25, At: time.Now()}
			if _, err := ts.st.AddTrials(j.key, []store.Trial{tr}); err != nil {
				t.Fatal(err)
			}
			if err := ts.st.PutServed(j.key, store.Served{Key: key, TimeMS: 1.25, PromotedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			return j.key, key
		}
	}
	t.Fatalf("no job %s %s", kernel, problem)
	return store.JobKey{}, ""
}

func TestRoutesSorted(t *testing.T) {
	var s server
	var paths []string
	for _, r := range s.routes() {
		_, p, _ := strings.Cut(r.Pattern, " ")
		paths = append(paths, p+" "+r.Pattern)
	}
	if !slices.IsSorted(paths) {
		t.Errorf("route table is not sorted by path: %v", paths)
	}
}

func TestConfigMatches(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	_, key := ts.serve(t, "sgemm", "256,256,256")
	tests := []struct {
		name, path string
		status     int
		match      api.Match
		from       string
	}{
		{"exact", "/v1/configs/sgemm?problem=256,256,256", 200, api.MatchExact, ""},
		{"exact with x", "/v1/configs/sgemm?problem=256x256x256", 200, api.MatchExact, ""},
		{"nearest", "/v1/configs/sgemm?problem=300,300,300", 200, api.MatchNearest, "256,256,256"},
		{"default", "/v1/configs/reduce?problem=4194304", 200, api.MatchDefault, ""},
		{"no problem, several jobs", "/v1/configs/sgemm", 400, "", ""},
		{"bad problem", "/v1/configs/sgemm?problem=-1", 400, "", ""},
		{"unknown kernel", "/v1/configs/nope?problem=1", 404, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := ts.get(t, tt.path, nil)
			if status != tt.status {
				t.Fatalf("GET %s = %d %s, want %d", tt.path, status, body, tt.status)
			}
			if status != 200 {
				var e api.Error
				if json.Unmarshal(body, &e) != nil || e.Error == "" || e.Code == "" {
					t.Errorf("error body %s is not an api.Error", body)
				}
				return
			}
			var c api.Config
			if err := json.Unmarshal(body, &c); err != nil {
				t.Fatal(err)
			}
			if c.Match != tt.match || c.From != tt.from || len(c.Config) == 0 || c.Key == "" {
				t.Errorf("GET %s = %+v", tt.path, c)
			}
			if tt.match != api.MatchDefault && (c.Key != key || c.TimeMS != 1.25) {
				t.Errorf("GET %s served %s %.2f, want %s 1.25", tt.path, c.Key, c.TimeMS, key)
			}
			if tt.match == api.MatchNearest && !(c.Confidence > 0 && c.Confidence < 1) {
				t.Errorf("nearest confidence = %v", c.Confidence)
			}
		})
	}
}

func TestBrowsersAndHostsRefused(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	for _, hdr := range []map[string]string{{"Origin": "http://evil.example"}, {"Referer": "http://evil.example/"}} {
		if status, _ := ts.get(t, "/v1/status", hdr); status != 403 {
			t.Errorf("GET with %v = %d, want 403", hdr, status)
		}
	}
	req, _ := http.NewRequest("GET", "http://evil.example/v1/status", nil)
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("GET with Host evil.example = %d, want 403", resp.StatusCode)
	}
	if got := resp.Header.Get(api.HeaderVersion); got != "test" {
		t.Errorf("%s = %q", api.HeaderVersion, got)
	}
}

func TestBadWrites(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	post := func(path, body string) (int, api.Error) {
		resp, err := ts.client.Post("http://quasimd"+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e api.Error
		json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e
	}
	tests := []struct {
		path, body string
		status     int
	}{
		{"/v1/kernels/sgemm/tune", `{"budget": -1}`, 400},
		{"/v1/kernels/sgemm/tune", `{"problem": "1,2"}`, 400}, // sgemm has 3 dims
		{"/v1/kernels/sgemm/tune", `{"problem": "1,2,3"}`, 404},
		{"/v1/kernels/sgemm/tune", `{"bogus": 1}`, 400},
		{"/v1/kernels/sgemm/tune", `not json`, 400},
		{"/v1/kernels/sgemm/tune", `{"budget": 1}` + strings.Repeat(" ", api.MaxBodyBytes), 413}, // as on every route
		{"/v1/kernels/nope/tune", ``, 404},
		{"/v1/kernels/sgemm/import", `{"trials": []}`, 400},
		{"/v1/kernels/sgemm/import", `{"problem": "128,128,128", "trials": [{"key": "16,16,16,1,1,False,ijk,fp32", "status": "weird"}]}`, 400},
	}
	for _, tt := range tests {
		status, e := post(tt.path, tt.body)
		if status != tt.status || e.Error == "" {
			t.Errorf("POST %s %.40q = %d %+v, want %d with an error", tt.path, tt.body, status, e, tt.status)
		}
	}
	// An import stores the keys of the space and skips the rest.
	status, _ := post("/v1/kernels/sgemm/import", `{"problem": "128,128,128", "trials": [
		{"key": "16,16,16,1,1,False,ijk,fp32", "status": "ok", "time_ms": 2.5},
		{"key": "not,a,key", "status": "ok", "time_ms": 1}]}`)
	if status != 200 {
		t.Fatalf("import = %d", status)
	}
	_, body := ts.get(t, "/v1/kernels/sgemm/trials?problem=128,128,128", nil)
	var tr api.Trials
	json.Unmarshal(body, &tr)
	if len(tr.Trials) != 1 || tr.Trials[0].TimeMS != 2.5 {
		t.Errorf("trials after import = %+v", tr.Trials)
	}
}

func TestParseProblem(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"1024,1024,1024", []int{1024, 1024, 1024}},
		{"64x32", []int{64, 32}},
		{" 7 ", []int{7}},
		{"", nil}, {"a,b", nil}, {"0", nil}, {"1,,2", nil},
	}
	for _, tt := range tests {
		got, err := parseProblem(tt.in)
		if (err != nil) != (tt.want == nil) || !slices.Equal(got, tt.want) {
			t.Errorf("parseProblem(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
}
