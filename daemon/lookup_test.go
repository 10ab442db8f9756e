package daemon

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/internal/spec"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

// nearestByScan is the nearest search as a scan of every job in the
// kernel's order, which the index must agree with: the served job of the
// device with the query's number of dimensions at the least log distance,
// the first of equals.
func nearestByScan(t *testing.T, st *store.Store, k *kernel, device string, dims []int, skip string) (*job, float64) {
	var best *job
	bestD := math.Inf(1)
	for _, j := range k.jobs {
		if j.key.Device != device || j.key.Problem == skip {
			continue
		}
		jd, err := parseProblem(j.key.Problem)
		if err != nil || len(jd) != len(dims) {
			continue
		}
		if _, ok, err := st.Served(j.key); err != nil {
			t.Fatal(err)
		} else if !ok {
			continue
		}
		if d := logDistance(dims, jd); d < bestD {
			best, bestD = j, d
		}
	}
	return best, bestD
}

func TestNearestAgreesWithScan(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 2, 3, 64, 100, 128, 256, 300, 512, 1000, 1024, 4096}
	dim := func() int { return sizes[rng.IntN(len(sizes))] }
	k := &kernel{spec: &spec.Spec{Name: "k"}}
	seen := map[string]bool{}
	for len(k.jobs) < 400 {
		nd := 1 + rng.IntN(3)
		p := make([]string, nd)
		for i := range p {
			p[i] = fmt.Sprint(dim())
		}
		key := store.JobKey{Kernel: "k", SpecHash: "h", Problem: strings.Join(p, ","), Device: []string{"cpu/a", "cpu/b"}[rng.IntN(2)]}
		if seen[key.String()] {
			continue
		}
		seen[key.String()] = true
		k.jobs = append(k.jobs, &job{key: key, kern: k})
		if rng.IntN(3) > 0 {
			if err := st.PutServed(key, store.Served{Key: "c", TimeMS: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var x lookupIndex
	check := func() {
		t.Helper()
		ki, err := x.kernel(st, k)
		if err != nil {
			t.Fatal(err)
		}
		queryAll(t, rng, &x, ki, st, k, dim)
	}
	check()
	// Jobs that start or stop serving, and say so, are found or not at once.
	var changed []store.JobKey
	for _, j := range k.jobs[:100] {
		if _, ok, _ := st.Served(j.key); ok {
			if err := st.ClearServed(j.key); err != nil {
				t.Fatal(err)
			}
		} else if err := st.PutServed(j.key, store.Served{Key: "c", TimeMS: 1}); err != nil {
			t.Fatal(err)
		}
		changed = append(changed, j.key)
	}
	x.invalidate(changed...)
	check()
}

func queryAll(t *testing.T, rng *rand.Rand, x *lookupIndex, ki *kernelIndex, st *store.Store, k *kernel, dim func() int) {
	t.Helper()
	for range 1000 {
		nd := 1 + rng.IntN(3)
		dims := make([]int, nd)
		for i := range dims {
			dims[i] = dim() + rng.IntN(3)
		}
		device := []string{"cpu/a", "cpu/b"}[rng.IntN(2)]
		problem := evaluate.Problem{Dims: dims}.String()
		want, wantD := nearestByScan(t, st, k, device, dims, problem)
		pi := ki.devices[device][nd]
		if pi == nil {
			if want != nil {
				t.Fatalf("%s on %s: no index, scan found %s", problem, device, want.key.Problem)
			}
			continue
		}
		got, e, d, err := x.nearest(st, pi, dims, pi.exact[problem])
		if err != nil {
			t.Fatal(err)
		}
		if got != want || (got != nil && (d != wantD || !e.HasServed)) {
			gp, wp := "none", "none"
			if got != nil {
				gp = got.key.Problem
			}
			if want != nil {
				wp = want.key.Problem
			}
			t.Fatalf("nearest(%s on %s) = %s at %v, scan finds %s at %v", problem, device, gp, d, wp, wantD)
		}
	}
}

// TestLookupInvalidatesOnlyWhatChanged checks a change to one job drops
// its kernel's cached answers and its own entry, and keeps the others'.
func TestLookupInvalidatesOnlyWhatChanged(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	sgemm, _ := ts.serve(t, "sgemm", "256,256,256")
	reduce, _ := ts.serve(t, "reduce", firstProblem(t, ts, "reduce"))
	for _, p := range []string{"/v1/configs/sgemm?problem=256,256,256", "/v1/configs/sgemm?problem=300,300,300", "/v1/configs/reduce?problem=" + reduce.Problem} {
		if status, body := ts.get(t, p, nil); status != 200 {
			t.Fatalf("GET %s = %d %s", p, status, body)
		}
	}
	x := &ts.sched.index
	cachedOf := func(name string) int {
		x.mu.Lock()
		defer x.mu.Unlock()
		return len(x.kernels[name].answers)
	}
	held := func(k store.JobKey) bool {
		x.mu.Lock()
		defer x.mu.Unlock()
		_, ok := x.entries[k]
		return ok
	}
	// sgemm's nearest answer at 300³ is not kept: its verification is
	// refused (this scheduler runs no cycles), and a refusal may lift.
	if cachedOf("sgemm") != 1 || cachedOf("reduce") != 1 || !held(sgemm) || !held(reduce) {
		t.Fatalf("before: %d sgemm and %d reduce answers cached", cachedOf("sgemm"), cachedOf("reduce"))
	}
	ts.sched.changed(sgemm)
	if cachedOf("sgemm") != 0 || held(sgemm) {
		t.Errorf("after sgemm changed: %d sgemm answers cached, entry held %v; want none", cachedOf("sgemm"), held(sgemm))
	}
	if cachedOf("reduce") != 1 || !held(reduce) {
		t.Errorf("after sgemm changed: reduce lost its cached answer or entry")
	}
}

func firstProblem(t *testing.T, ts *testServer, name string) string {
	k, ok := ts.sched.kernel(name)
	if !ok || len(k.jobs) == 0 {
		t.Fatalf("kernel %s has no jobs", name)
	}
	return k.jobs[0].key.Problem
}

// TestImportUpdatesDefaultTime checks that importing a measurement of the
// default config shows in the next answer's default_ms (the cached answer
// kept the old one).
func TestImportUpdatesDefaultTime(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	key, _ := ts.serve(t, "sgemm", "256,256,256")
	path := "/v1/configs/sgemm?problem=256,256,256"
	get := func() api.Config {
		status, body := ts.get(t, path, nil)
		var c api.Config
		if status != 200 || json.Unmarshal(body, &c) != nil {
			t.Fatalf("GET %s = %d %s", path, status, body)
		}
		return c
	}
	if c := get(); c.DefaultMS != 0 {
		t.Fatalf("default_ms before any measurement of the default = %v", c.DefaultMS)
	}
	k, _ := ts.sched.kernel("sgemm")
	var def string
	for _, j := range k.jobs {
		if j.key == key {
			def = defaultKey(j)
		}
	}
	body := fmt.Sprintf(`{"problem": "256,256,256", "trials": [{"key": %q, "status": "ok", "time_ms": 7.5, "at": %q}]}`, def, time.Now().Format(time.RFC3339))
	resp, err := ts.client.Post("http://quasimd/v1/kernels/sgemm/import", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("import = %d", resp.StatusCode)
	}
	if c := get(); c.DefaultMS != 7.5 {
		t.Errorf("default_ms after importing the default's trial = %v, want 7.5", c.DefaultMS)
	}
}

func TestProfile(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	// The test runs as the daemon's own uid, which may write.
	if status, body := ts.get(t, "/debug/pprof/heap?gc=1", nil); status != 200 || len(body) == 0 {
		t.Errorf("GET heap profile = %d, %d bytes", status, len(body))
	}
	if status, body := ts.get(t, "/debug/pprof/goroutine?debug=1", nil); status != 200 || !strings.Contains(string(body), "goroutine profile") {
		t.Errorf("GET goroutine profile = %d %.80s", status, body)
	}
	if status, _ := ts.get(t, "/debug/pprof/nope", nil); status != 404 {
		t.Errorf("GET unknown profile = %d, want 404", status)
	}
	if os.Getuid() == 0 {
		t.Log("running as root, which may always write: the refusal of a reader is not checked")
		return
	}
	ts.api.Writers = sockapi.NewWriters(nil, "")
	ts.api.Writers.Self = 1 << 30 // no longer the daemon's uid
	if status, _ := ts.get(t, "/debug/pprof/heap", nil); status != 403 {
		t.Errorf("GET heap profile as a reader = %d, want 403", status)
	}
}

// TestLookupWhileChanging looks up while a job starts and stops serving and
// says so; the answers after the last change must show it (run with -race).
func TestLookupWhileChanging(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	key, cfg := ts.serve(t, "sgemm", "256,256,256")
	paths := []string{"/v1/configs/sgemm?problem=256,256,256", "/v1/configs/sgemm?problem=300,300,300", "/v1/configs/sgemm?problem=128,128,128"}
	done := make(chan struct{})
	errs := make(chan error, 4)
	for g := range 3 {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				req, _ := http.NewRequest("GET", "http://quasimd"+paths[(g+i)%len(paths)], nil)
				resp, err := ts.client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("GET %s = %d", paths[(g+i)%len(paths)], resp.StatusCode)
					return
				}
			}
		}()
	}
	served := true
	for range 50 {
		if served {
			if err := ts.st.ClearServed(key); err != nil {
				t.Fatal(err)
			}
		} else if err := ts.st.PutServed(key, store.Served{Key: cfg, TimeMS: 1.25, PromotedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		served = !served
		ts.sched.changed(key)
	}
	close(done)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// 50 changes leave it serving again.
	for _, p := range paths {
		status, body := ts.get(t, p, nil)
		var c api.Config
		if status != 200 || json.Unmarshal(body, &c) != nil {
			t.Fatalf("GET %s = %d %s", p, status, body)
		}
		want := api.MatchNearest
		if strings.Contains(p, "256,256,256") {
			want = api.MatchExact
		}
		if c.Match != want || c.Key != cfg {
			t.Errorf("GET %s after the last change = %s %s, want %s %s", p, c.Match, c.Key, want, cfg)
		}
	}
}

// A lookup over the socket on one kept-alive connection (the fast loop)
// answers what is served now: after a new promotion, and after a reload
// that changes the kernel's spec (whose new version serves nothing yet).
// The fast loop answers from the lookup index's cache; without its check
// of the kernel's identity, or with a connection keeping its first answer,
// the old answer came back.
func TestLookupAfterPromotionAndReload(t *testing.T) {
	dir := t.TempDir()
	write := func(evals int) {
		spec := fmt.Sprintf("name: reduce\nevaluator: builtin:reduce\nproblems: [\"65536\"]\nschedule: \"@every 1h\"\nbudget: {evals: %d}\n", evals)
		if err := os.WriteFile(filepath.Join(dir, "reduce.yaml"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(4)
	ts := newTestServer(t, dir)
	c, err := net.Dial("unix", ts.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	handed, _ := ts.api.Handed()
	lookup := func(what string) api.Config {
		t.Helper()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, "GET /v1/configs/reduce?problem=65536 HTTP/1.1\r\nHost: quasimd\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer resp.Body.Close()
		var cfg api.Config
		if err := json.NewDecoder(resp.Body).Decode(&cfg); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", what, resp.StatusCode, err)
		}
		return cfg
	}
	first := lookup("first")
	if again := lookup("again, from the cache"); first.Match != api.MatchDefault || again.Match != api.MatchDefault {
		t.Fatalf("before any promotion: %s then %s, want default", first.Match, again.Match)
	}
	key, served := ts.serve(t, "reduce", "65536")
	ts.sched.changed(key) // as a cycle's promotion does
	if got := lookup("after the promotion"); got.Match != api.MatchExact || got.Key != served {
		t.Errorf("after a promotion: %s %s, want exact %s", got.Match, got.Key, served)
	}
	lookup("after the promotion, from the cache")
	write(5)
	ts.sched.apply(ts.sched.load())
	if got := lookup("after the reload"); got.Match != api.MatchDefault || got.SpecHash == first.SpecHash {
		t.Errorf("after a reload that changed the spec: %s, spec %s; want default of the new spec (the old was %s)", got.Match, got.SpecHash, first.SpecHash)
	}
	if now, _ := ts.api.Handed(); now-handed != 0 {
		t.Errorf("%d connections handed to net/http; the lookups were to stay on the fast loop", now-handed)
	}
}
