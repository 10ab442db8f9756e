package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
)

// fakeDaemon answers quasimd's routes from memory on a real Unix socket.
// It stands in for the daemon at the process boundary; the real daemon's
// end-to-end tests live with cmd/quasimd.
type fakeDaemon struct {
	sock      string
	version   string // Quasim-Version header; "" sends none
	unhealthy bool   // status answers unhealthyStatus

	mu      sync.Mutex
	kernels []api.Kernel
	trials  map[string][]api.Trial // by kernel
	cycles  map[string][]api.Cycle // by kernel
	// script, if set, advances a kernel's cycles on each GET cycles: it gets
	// the poll number (1, 2, ...) and the time the last tune request came.
	script   func(kernel string, poll int, tuned time.Time) []api.Cycle
	polls    int
	tunedAt  time.Time
	lastTune api.TuneRequest
	queries  []string
}

var (
	fakeT0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

	fakeStatus = api.Status{
		Version: "v9", Started: fakeT0, UptimeS: 3725, StateDir: "/var/lib/quasim", SpecDir: "/etc/quasim/kernels.d",
		Kernels: 2, Jobs: 3, Running: []string{"sgemm/256,256,256/cpu"}, Trials: 42,
		SpecError: []string{}, Failing: []api.Failing{}, LastSuccess: &fakeT0,
	}
	// unhealthyStatus has cycles failing and a spec file that did not load.
	unhealthyStatus = func() api.Status {
		st := fakeStatus
		st.SpecError = []string{"bad.yaml: line 3: unknown field \"bogus\""}
		retry := fakeT0.Add(time.Hour + 4*time.Minute)
		st.Failing = []api.Failing{{Job: "sgemm/512,512,512/cpu", Cycle: 3, At: fakeT0.Add(time.Hour), Since: fakeT0.Add(50 * time.Minute), RetryAt: &retry,
			Error: "lock: open /run/lock/quasim/cpu.lock: permission denied", LastSuccess: &fakeT0}}
		return st
	}()
	fakeConfig = api.Config{
		Kernel: "sgemm", Problem: "256,256,256", Device: "cpu/test", Config: map[string]any{"bx": 16.0, "unroll": true, "kind": "tiled"},
		Key: "16,True,tiled", Match: api.MatchNearest, From: "128,128,128", Confidence: 0.8, TimeMS: 4.2134, DefaultMS: 9.5,
		TimeCILowMS: 4.1, TimeCIHighMS: 4.4, Speedup: &api.Speedup{Baseline: "32,False,naive", Ratio: 2.254, Low: 2.1, High: 2.41, Rounds: 6},
		Certificate: "cert-123", SpecHash: "h", CertifiedFor: "128,128,128", Verification: api.VerifyPending,
	}
)

// newFakeDaemon starts a fake daemon; setup runs before it serves.
func newFakeDaemon(t *testing.T, setup ...func(*fakeDaemon)) *fakeDaemon {
	t.Helper()
	f := &fakeDaemon{
		kernels: []api.Kernel{
			{Name: "sgemm", Evaluator: "builtin", Schedule: "@hourly", Params: []string{"bx", "unroll", "kind"}, Configs: 120, Jobs: []api.Job{
				{ID: "sgemm/256,256,256/cpu", Problem: "256,256,256", Device: "cpu/test", Trials: 12, Running: true,
					Served: &api.Config{Key: "16,True,tiled", TimeMS: 4.2134}},
				{ID: "sgemm/512,512,512/cpu", Problem: "512,512,512", Device: "cpu/test", Trials: 0, RequestedBy: "uid 65534 (nobody)"},
			}},
			{Name: "k", Evaluator: "replay", Schedule: "", Params: []string{"bx", "f", "mode"}, Configs: 5},
			{Name: "locked", Evaluator: "exec", Params: []string{"x"}},
			{Name: "empty", Evaluator: "builtin"},
		},
		trials: map[string][]api.Trial{
			"sgemm": {
				{Key: "16,True,tiled", Status: "ok", TimeMS: 4.2134, TimesMS: []float64{4.2, 4.3}, CostS: 0.25, At: fakeT0, Problem: "256,256,256", Device: "cpu/test", Cycle: 3},
				{Key: "32,False,naive", Status: "compile", CostS: 1.5, At: fakeT0, Problem: "256,256,256", Device: "cpu/test"},
				{Key: "8,True,tiled", Status: "ok", TimeMS: 7.5, At: fakeT0, Problem: "512,512,512", Device: "cpu/test", Cycle: 1},
			},
		},
		cycles: map[string][]api.Cycle{
			"sgemm": {{ID: 3, Job: "sgemm/256,256,256/cpu", Kernel: "sgemm", Problem: "256,256,256", Device: "cpu/test", Trigger: "cron",
				State: "done", Started: fakeT0, Ended: ptr(fakeT0.Add(90 * time.Second)), Budget: 20, Evals: 20, BestKey: "16,True,tiled", BestMS: 4.2134, Promoted: "16,True,tiled",
				Strategy: "portfolio", Allocation: map[string]int{"es": 8, "quantumsearch": 12}}},
		},
	}
	for _, fn := range setup {
		fn(f)
	}
	f.sock = serveUnix(t, f.handler())
	return f
}

func ptr[T any](v T) *T { return &v }

// serveUnix serves h on a Unix socket in a temporary directory.
func serveUnix(t *testing.T, h http.Handler) string {
	t.Helper()
	sock := tempSocket(t)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock
}

// tempSocket is a socket path short enough for sun_path.
func tempSocket(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if len(dir) > 90 {
		d, err := os.MkdirTemp("/tmp", "qctl")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		dir = d
	}
	return filepath.Join(dir, "quasimd.sock")
}

func (f *fakeDaemon) handler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, h func(w http.ResponseWriter, r *http.Request) (any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if f.version != "" {
				w.Header().Set(api.HeaderVersion, f.version)
			}
			if r.Host != api.Host {
				writeTestJSON(w, http.StatusForbidden, api.Error{Error: "bad host " + r.Host, Code: api.CodePermissionDenied})
				return
			}
			f.mu.Lock()
			f.queries = append(f.queries, r.Method+" "+r.URL.RequestURI())
			v, err := h(w, r)
			f.mu.Unlock()
			if err != nil {
				status := map[api.Code]int{api.CodeNotFound: 404, api.CodePermissionDenied: 403, api.CodeInvalidArgument: 400}[api.CodeOf(err)]
				writeTestJSON(w, status, api.Error{Error: err.Error(), Code: api.CodeOf(err)})
				return
			}
			writeTestJSON(w, http.StatusOK, v)
		})
	}
	kernel := func(r *http.Request) (*api.Kernel, error) {
		name := r.PathValue("kernel")
		for i := range f.kernels {
			if f.kernels[i].Name == name {
				return &f.kernels[i], nil
			}
		}
		return nil, &testAPIError{api.ErrNotFound, `kernel "` + name + `" not found`}
	}
	handle(api.RouteStatus, func(w http.ResponseWriter, r *http.Request) (any, error) {
		if f.unhealthy {
			return unhealthyStatus, nil
		}
		return fakeStatus, nil
	})
	handle(api.RouteReload, func(w http.ResponseWriter, r *http.Request) (any, error) {
		if f.unhealthy {
			return api.ReloadResponse{Kernels: 1, Errors: unhealthyStatus.SpecError}, nil
		}
		return api.ReloadResponse{Kernels: 2, Errors: []string{}}, nil
	})
	handle(api.RouteKernels, func(w http.ResponseWriter, r *http.Request) (any, error) { return f.kernels, nil })
	handle(api.RouteConfig, func(w http.ResponseWriter, r *http.Request) (any, error) {
		if _, err := kernel(r); err != nil {
			return nil, err
		}
		c := fakeConfig
		if p := r.URL.Query().Get("problem"); p != "" {
			c.Problem = p
		}
		return c, nil
	})
	handle(api.RouteKernelTrials, func(w http.ResponseWriter, r *http.Request) (any, error) {
		k, err := kernel(r)
		if err != nil {
			return nil, err
		}
		out := api.Trials{Kernel: k.Name, Params: k.Params, Trials: []api.Trial{}}
		for _, t := range f.trials[k.Name] {
			if p := r.URL.Query().Get("problem"); p == "" || p == t.Problem {
				out.Trials = append(out.Trials, t)
			}
		}
		// Pages as the daemon does, with the offset as the cursor.
		limit, from := api.DefaultTrialsLimit, 0
		if v := r.URL.Query().Get("limit"); v != "" {
			limit, _ = strconv.Atoi(v)
		}
		if v := r.URL.Query().Get("cursor"); v != "" {
			from, _ = strconv.Atoi(strings.TrimPrefix(v, "at-"))
		}
		out.Trials = out.Trials[min(from, len(out.Trials)):]
		if len(out.Trials) > limit {
			out.Trials, out.Next = out.Trials[:limit], "at-"+strconv.Itoa(from+limit)
		}
		return out, nil
	})
	handle(api.RouteKernelCycles, func(w http.ResponseWriter, r *http.Request) (any, error) {
		k, err := kernel(r)
		if err != nil {
			return nil, err
		}
		cs := f.cycles[k.Name]
		if p := r.URL.Query().Get("problem"); p != "" {
			var of []api.Cycle
			for _, c := range cs {
				if c.Problem == p {
					of = append(of, c)
				}
			}
			if of == nil {
				return nil, &testAPIError{api.ErrNotFound, "kernel " + k.Name + " has no problem " + p}
			}
			cs = of
		}
		if f.script != nil && !f.tunedAt.IsZero() {
			f.polls++
			cs = append(cs, f.script(k.Name, f.polls, f.tunedAt)...)
		}
		return api.Cycles{Kernel: k.Name, Cycles: cs}, nil
	})
	handle(api.RouteCerts, func(w http.ResponseWriter, r *http.Request) (any, error) {
		return api.Certs{Certs: []api.CertSummary{}}, nil
	})
	handle(api.RouteKernelTune, func(w http.ResponseWriter, r *http.Request) (any, error) {
		k, err := kernel(r)
		if err != nil {
			return nil, err
		}
		if k.Name == "locked" {
			return nil, &testAPIError{api.ErrPermissionDenied, "only operators may start tuning"}
		}
		if err := json.NewDecoder(r.Body).Decode(&f.lastTune); err != nil {
			return nil, &testAPIError{api.ErrInvalidArgument, err.Error()}
		}
		f.tunedAt = time.Now()
		resp := api.TuneResponse{Kernel: k.Name}
		for _, j := range k.Jobs {
			if f.lastTune.Problem == "" || f.lastTune.Problem == j.Problem {
				resp.Jobs = append(resp.Jobs, j.ID)
			}
		}
		return resp, nil
	})
	handle(api.RouteImport, func(w http.ResponseWriter, r *http.Request) (any, error) {
		k, err := kernel(r)
		if err != nil {
			return nil, err
		}
		var req api.ImportRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			return nil, &testAPIError{api.ErrInvalidArgument, err.Error()}
		}
		resp := api.ImportResponse{Job: k.Name + "/" + req.Problem + "/" + req.Device}
		have := map[string]bool{}
		for _, t := range f.trials[k.Name] {
			have[t.Problem+"|"+t.Device+"|"+t.Key] = true
		}
		for _, t := range req.Trials {
			if have[req.Problem+"|"+req.Device+"|"+t.Key] {
				resp.Skipped++
				continue
			}
			t.Problem, t.Device = req.Problem, req.Device
			f.trials[k.Name] = append(f.trials[k.Name], t)
			resp.Stored++
		}
		return resp, nil
	})
	return mux
}

// lastQuery is the method and request URI of the last request.
func (f *fakeDaemon) lastQuery() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queries[len(f.queries)-1]
}

// testAPIError is an error with a code, as the daemon's handlers produce.
type testAPIError struct {
	sentinel error
	msg      string
}

func (e *testAPIError) Error() string { return e.msg }
func (e *testAPIError) Unwrap() error { return e.sentinel }

func writeTestJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// ctl runs quasimctl against the fake daemon.
func (f *fakeDaemon) ctl(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCtx(context.Background(), append([]string{"--socket", f.sock}, args...)...)
}

func runCtx(ctx context.Context, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := Main(ctx, args, &out, &errb)
	return out.String(), errb.String(), code
}

// mustContain fails t unless s contains each of want.
func mustContain(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s = %q, want it to contain %q", what, s, w)
		}
	}
}

// decodeStrict decodes s into a T, failing t on error.
func decodeStrict[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	missing := tempSocket(t)
	tests := []struct {
		name string
		args []string
		code int
		msg  string // on stderr
	}{
		{"ok", []string{"--socket", f.sock, "status"}, 0, ""},
		{"no daemon", []string{"--socket", missing, "status"}, 3, "cannot reach quasimd at " + missing},
		{"no daemon for kernels", []string{"--socket", missing, "kernels"}, 3, "is quasimd running?"},
		{"not found", []string{"--socket", f.sock, "config", "nope"}, 4, `quasimctl: kernel "nope" not found`},
		{"trials not found", []string{"--socket", f.sock, "trials", "nope"}, 4, `kernel "nope" not found`},
		{"export unknown kernel", []string{"--socket", f.sock, "export", "nope"}, 4, "not found"},
		{"permission denied", []string{"--socket", f.sock, "tune", "locked"}, 5, "only operators may start tuning"},
		{"config without kernel", []string{"--socket", f.sock, "config"}, 2, "config takes KERNEL, got 0 arguments"},
		{"cycles with two kernels", []string{"--socket", f.sock, "cycles", "a", "b"}, 2, "cycles takes KERNEL"},
		{"status with an argument", []string{"--socket", f.sock, "status", "x"}, 2, "status takes no arguments"},
		{"export csv", []string{"--socket", f.sock, "export", "sgemm", "--format", "csv"}, 2, `unsupported --format "csv"`},
		{"import without kernel", []string{"--socket", f.sock, "import", "x.json"}, 2, "--kernel is required"},
		{"unknown command", []string{"--socket", f.sock, "bogus"}, 2, `unknown command "bogus"`},
		{"unknown flag", []string{"--socket", f.sock, "trials", "sgemm", "--bogus"}, 2, "unknown flag"},
		{"negative budget", []string{"--socket", f.sock, "tune", "sgemm", "--budget", "-1"}, 2, "--budget"},
		{"import missing file", []string{"--socket", f.sock, "import", filepath.Join(t.TempDir(), "none.json"), "--kernel", "k"}, exitUsage, "no such file"},
		// Bad input named on the command line is exit 2 in every command
		// that reads one (causal import exited 1 where memgraph plan exited 2).
		{"causal import missing file", []string{"causal", "import", "--offline", filepath.Join(t.TempDir(), "none.json")}, exitUsage, "no such file"},
		{"memgraph plan missing file", []string{"memgraph", "plan", "--offline", filepath.Join(t.TempDir(), "none.onnx")}, exitUsage, "no such file"},
		{"certs verify missing file", []string{"certs", "verify", "--file", filepath.Join(t.TempDir(), "none.json"), "--pubkey", "ed25519:x"}, exitUsage, "--pubkey"},
		// db without check or salvage is a usage error, not help and 0.
		{"db without a subcommand", []string{"db"}, exitUsage, "db needs a subcommand: check or salvage"},
		{"cycles of a problem not tuned", []string{"--socket", f.sock, "cycles", "sgemm", "--problem", "1,2,3"}, exitNotFound, "1,2,3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, errs, code := runCtx(context.Background(), tt.args...)
			if code != tt.code {
				t.Errorf("Main(%q) = %d, want %d (stderr %q)", tt.args, code, tt.code, errs)
			}
			mustContain(t, "stderr", errs, tt.msg)
		})
	}
}

func TestInterrupted(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, errs, code := runCtx(ctx, "--socket", f.sock, "status"); code != 130 {
		t.Errorf("status with a cancelled context = %d, want 130 (stderr %q)", code, errs)
	}
}

func TestVersionWarning(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t, func(f *fakeDaemon) { f.version = "v0-other" })
	_, errs, code := f.ctl(t, "status")
	if code != 0 {
		t.Fatalf("status = %d, want 0", code)
	}
	mustContain(t, "stderr", errs, "warning: quasimd is version v0-other")
	if n := strings.Count(errs, "warning"); n != 1 {
		t.Errorf("stderr has %d warnings, want 1: %q", n, errs)
	}
}

// Not parallel: it sets QUASIM_SOCKET.
func TestSocketFromEnvironment(t *testing.T) {
	f := newFakeDaemon(t)
	t.Setenv("QUASIM_SOCKET", f.sock)
	if got := client.DefaultSocket(); got != f.sock {
		t.Fatalf("DefaultSocket() = %q, want %q", got, f.sock)
	}
	out, errs, code := runCtx(context.Background(), "status")
	if code != 0 {
		t.Fatalf("status with QUASIM_SOCKET = %d, want 0 (stderr %q)", code, errs)
	}
	mustContain(t, "status", out, "v9")
}

func TestGlobalFlagsAnywhere(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	for _, args := range [][]string{
		{"--json", "--socket", f.sock, "status"},
		{"status", "--json", "--socket", f.sock},
	} {
		out, errs, code := runCtx(context.Background(), args...)
		if code != 0 {
			t.Fatalf("Main(%q) = %d, want 0 (stderr %q)", args, code, errs)
		}
		if got := decodeStrict[api.Status](t, out); got.Version != "v9" {
			t.Errorf("Main(%q) version = %q, want v9", args, got.Version)
		}
	}
}
