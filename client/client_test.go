package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
)

// socketPath returns a socket path in a fresh temporary directory, short
// enough for sun_path (108 bytes).
func socketPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if len(dir) > 90 {
		d, err := os.MkdirTemp("/tmp", "qc")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		dir = d
	}
	return filepath.Join(dir, "quasimd.sock")
}

// serve serves h on a real Unix socket and returns its path.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	sock := socketPath(t)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// request is what the fake daemon saw.
type request struct {
	Method, Path, Kernel, Host, Query string
	Body                              json.RawMessage
}

// fakeDaemon answers every route with canned bodies and records requests.
type fakeDaemon struct {
	mu   sync.Mutex
	reqs []request
}

func (f *fakeDaemon) last() request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reqs[len(f.reqs)-1]
}

var (
	t0       = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	statusV  = api.Status{Version: "v1", Started: t0, UptimeS: 60, StateDir: "/s", SpecDir: "/k", Kernels: 2, Jobs: 3, Running: []string{"j1"}, Trials: 9, SpecError: []string{"bad.yaml: oops"}}
	kernelsV = []api.Kernel{{Name: "sgemm", Evaluator: "builtin", Params: []string{"a", "b"}, Configs: 4, Jobs: []api.Job{{ID: "j1", Problem: "8,8", Device: "cpu/x", Trials: 3}}}}
	configV  = api.Config{Kernel: "sgemm", Problem: "8,8", Device: "cpu/x", Config: map[string]any{"a": 1.0, "b": "x"}, Key: "1,x", Match: api.MatchExact, TimeMS: 1.5}
	tuneV    = api.TuneResponse{Kernel: "sgemm", Jobs: []string{"j1"}}
	trialsV  = api.Trials{Kernel: "sgemm", Trials: []api.Trial{{Key: "1,x", Status: "ok", TimeMS: 1.5, TimesMS: []float64{1.5, 1.5}, At: t0, Problem: "8,8", Device: "cpu/x", Cycle: 1}}}
	cyclesV  = api.Cycles{Kernel: "sgemm", Cycles: []api.Cycle{{ID: 1, Job: "j1", Kernel: "sgemm", State: "done", Started: t0, Budget: 10, Evals: 10}}}
	importV  = api.ImportResponse{Job: "j1", Stored: 2, Skipped: 1}
	reloadV  = api.ReloadResponse{Kernels: 2, Errors: []string{}}
)

func (f *fakeDaemon) handler() http.Handler {
	mux := http.NewServeMux()
	route := func(pattern string, v any) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			var body json.RawMessage
			if r.Body != nil {
				json.NewDecoder(r.Body).Decode(&body)
			}
			f.mu.Lock()
			f.reqs = append(f.reqs, request{Method: r.Method, Path: r.URL.EscapedPath(), Kernel: r.PathValue("kernel"), Host: r.Host, Query: r.URL.RawQuery, Body: body})
			f.mu.Unlock()
			w.Header().Set(api.HeaderVersion, "v1")
			switch k := r.PathValue("kernel"); {
			case k == "missing":
				writeJSON(w, http.StatusNotFound, api.Error{Error: `kernel "missing" not found`, Code: api.CodeNotFound})
				return
			case strings.HasPrefix(k, "e-"):
				parts := strings.SplitN(k, "-", 3)
				n, _ := strconv.Atoi(parts[1])
				writeJSON(w, n, api.Error{Error: "server says " + k, Code: api.Code(parts[2])})
				return
			case k == "plain":
				w.WriteHeader(http.StatusForbidden)
				w.Write([]byte("go away\n"))
				return
			}
			if pattern == api.RouteKernels && r.URL.Query().Has("cursor") {
				writeJSON(w, http.StatusOK, api.KernelsPage{Kernels: kernelsV, Next: "c2"})
				return
			}
			writeJSON(w, http.StatusOK, v)
		})
	}
	route(api.RouteStatus, statusV)
	route(api.RouteKernels, kernelsV)
	route(api.RouteConfig, configV)
	route(api.RouteKernelTune, tuneV)
	route(api.RouteKernelTrials, trialsV)
	route(api.RouteKernelCycles, cyclesV)
	route(api.RouteImport, importV)
	route(api.RouteReload, reloadV)
	return mux
}

func newClient(t *testing.T) (*client.Client, *fakeDaemon) {
	f := &fakeDaemon{}
	return &client.Client{Socket: serve(t, f.handler())}, f
}

func TestMethods(t *testing.T) {
	t.Parallel()
	c, f := newClient(t)
	ctx := context.Background()
	tests := []struct {
		name string
		call func() (any, error)
		want any
		req  request // Host is always checked; Body when set
	}{
		{"Status", func() (any, error) { return c.Status(ctx) }, statusV, request{Method: "GET", Path: "/v1/status"}},
		{"Kernels", func() (any, error) { return c.Kernels(ctx) }, kernelsV, request{Method: "GET", Path: "/v1/kernels"}},
		{"KernelsPage", func() (any, error) { return c.KernelsPage(ctx, 5, "c1") }, api.KernelsPage{Kernels: kernelsV, Next: "c2"},
			request{Method: "GET", Path: "/v1/kernels", Query: "cursor=c1&limit=5"}},
		{"Config", func() (any, error) { return c.Config(ctx, "sgemm", "8,8", "cpu/x y") }, configV,
			request{Method: "GET", Path: "/v1/configs/sgemm", Kernel: "sgemm", Query: "device=cpu%2Fx+y&problem=8%2C8"}},
		{"ConfigNoQuery", func() (any, error) { return c.Config(ctx, "sgemm", "", "") }, configV,
			request{Method: "GET", Path: "/v1/configs/sgemm", Kernel: "sgemm"}},
		{"ConfigEscaped", func() (any, error) { return c.Config(ctx, "a/b c", "", "") }, configV,
			request{Method: "GET", Path: "/v1/configs/a%2Fb%20c", Kernel: "a/b c"}},
		{"Tune", func() (any, error) { return c.Tune(ctx, "sgemm", api.TuneRequest{Problem: "8,8", Budget: 5}) }, tuneV,
			request{Method: "POST", Path: "/v1/kernels/sgemm/tune", Kernel: "sgemm", Body: json.RawMessage(`{"problem":"8,8","budget":5}`)}},
		{"Trials", func() (any, error) { return c.Trials(ctx, "sgemm", "8,8") }, trialsV,
			request{Method: "GET", Path: "/v1/kernels/sgemm/trials", Kernel: "sgemm", Query: "limit=10000&problem=8%2C8"}},
		{"TrialsAll", func() (any, error) { return c.Trials(ctx, "sgemm", "") }, trialsV,
			request{Method: "GET", Path: "/v1/kernels/sgemm/trials", Kernel: "sgemm", Query: "limit=10000"}},
		{"TrialsPage", func() (any, error) { return c.TrialsPage(ctx, "sgemm", "8,8", 5, "abc") }, trialsV,
			request{Method: "GET", Path: "/v1/kernels/sgemm/trials", Kernel: "sgemm", Query: "cursor=abc&limit=5&problem=8%2C8"}},
		{"Cycles", func() (any, error) { return c.Cycles(ctx, "sgemm") }, cyclesV,
			request{Method: "GET", Path: "/v1/kernels/sgemm/cycles", Kernel: "sgemm"}},
		{"Import", func() (any, error) {
			return c.Import(ctx, "sgemm", api.ImportRequest{Problem: "8,8", Device: "d", Trials: []api.Trial{{Key: "1,x", Status: "ok", TimeMS: 2, At: t0}}})
		}, importV, request{Method: "POST", Path: "/v1/kernels/sgemm/import", Kernel: "sgemm",
			Body: json.RawMessage(`{"problem":"8,8","device":"d","trials":[{"key":"1,x","status":"ok","time_ms":2,"cost_s":0,"at":"2025-03-01T12:00:00Z","problem":"","device":""}]}`)}},
		{"Reload", func() (any, error) { return c.Reload(ctx) }, reloadV, request{Method: "POST", Path: "/v1/reload"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call()
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s = %+v, want %+v", tt.name, got, tt.want)
			}
			r := f.last()
			if r.Host != api.Host {
				t.Errorf("%s: Host = %q, want %q", tt.name, r.Host, api.Host)
			}
			if tt.req.Body == nil {
				r.Body = nil
			} else if !jsonEqual(r.Body, tt.req.Body) {
				t.Errorf("%s: body = %s, want %s", tt.name, r.Body, tt.req.Body)
			}
			r.Host, r.Body, tt.req.Body = "", nil, nil
			if !reflect.DeepEqual(r, tt.req) {
				t.Errorf("%s: request = %+v, want %+v", tt.name, r, tt.req)
			}
		})
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func TestErrors(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t)
	ctx := context.Background()
	tests := []struct {
		kernel string // e-STATUS-CODE makes the fake answer STATUS with CODE
		want   error
		status int
		msg    string
	}{
		{"missing", api.ErrNotFound, 404, `kernel "missing" not found`},
		{"e-400-invalid_argument", api.ErrInvalidArgument, 400, "server says e-400-invalid_argument"},
		{"e-403-permission_denied", api.ErrPermissionDenied, 403, "server says e-403-permission_denied"},
		{"e-409-conflict", api.ErrConflict, 409, "server says e-409-conflict"},
		{"e-503-unavailable", api.ErrUnavailable, 503, "server says e-503-unavailable"},
		{"e-500-internal", api.ErrInternal, 500, "server says e-500-internal"},
		{"e-500-weird", api.ErrInternal, 500, "server says e-500-weird"},
		{"e-404-", api.ErrNotFound, 404, "server says e-404-"},        // no code: by status
		{"e-400-", api.ErrInvalidArgument, 400, "server says e-400-"}, // no code: by status
		{"plain", api.ErrPermissionDenied, 403, "403 Forbidden: go away"},
	}
	for _, tt := range tests {
		t.Run(tt.kernel, func(t *testing.T) {
			_, err := c.Config(ctx, tt.kernel, "", "")
			if !errors.Is(err, tt.want) {
				t.Fatalf("Config(%q) error = %v, want errors.Is %v", tt.kernel, err, tt.want)
			}
			if err.Error() != tt.msg {
				t.Errorf("Config(%q) error = %q, want %q", tt.kernel, err.Error(), tt.msg)
			}
			var e *client.Error
			if !errors.As(err, &e) || e.Status != tt.status {
				t.Errorf("Config(%q) error = %#v, want *client.Error with status %d", tt.kernel, err, tt.status)
			}
		})
	}
}

func TestEmptyKernel(t *testing.T) {
	t.Parallel()
	var c client.Client
	if _, err := c.Trials(context.Background(), "", ""); !errors.Is(err, api.ErrInvalidArgument) {
		t.Errorf("Trials(\"\") error = %v, want %v", err, api.ErrInvalidArgument)
	}
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	missing := socketPath(t)
	// A socket file nobody listens on: connection refused.
	refused := socketPath(t)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: refused, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	for _, sock := range []string{missing, refused} {
		c := &client.Client{Socket: sock}
		_, err := c.Status(context.Background())
		if !errors.Is(err, api.ErrUnavailable) {
			t.Fatalf("Status() on %s error = %v, want %v", sock, err, api.ErrUnavailable)
		}
		msg := err.Error()
		for _, want := range []string{"cannot reach quasimd at " + sock + ": ", "; is quasimd running? (systemctl status quasimd; or start it: quasimd)"} {
			if !strings.Contains(msg, want) {
				t.Errorf("Status() on %s error = %q, want it to contain %q", sock, msg, want)
			}
		}
		var op *net.OpError
		if !errors.As(err, &op) {
			t.Errorf("Status() on %s error = %v, want it to wrap the *net.OpError", sock, err)
		}
	}
}

func TestCancelled(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	sock := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer close(block)
	ctx, cancel := context.WithCancel(context.Background())
	c := &client.Client{Socket: sock}
	errc := make(chan error, 1)
	go func() { _, err := c.Status(ctx); errc <- err }()
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) || errors.Is(err, api.ErrUnavailable) {
		t.Errorf("Status() after cancel error = %v, want context.Canceled only", err)
	}
}

func TestVersionMismatch(t *testing.T) {
	t.Parallel()
	sock := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(api.HeaderVersion, "v2")
		writeJSON(w, http.StatusOK, api.Status{Version: "v2"})
	}))
	tests := []struct {
		version string
		want    []string
	}{
		{"v1", []string{"v2"}}, // reported once, not per request
		{"v2", nil},
		{"", nil}, // check disabled
	}
	for _, tt := range tests {
		var got []string
		c := &client.Client{Socket: sock, Version: tt.version, OnVersionMismatch: func(d string) { got = append(got, d) }}
		for range 3 {
			if _, err := c.Status(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Version %q: OnVersionMismatch calls = %q, want %q", tt.version, got, tt.want)
		}
	}
	// Without a hook a mismatch is ignored.
	c := &client.Client{Socket: sock, Version: "v1"}
	if _, err := c.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestTransport(t *testing.T) {
	t.Parallel()
	var host string
	rt := roundTripper(func(r *http.Request) (*http.Response, error) {
		host = r.URL.Host
		return nil, errors.New("boom")
	})
	c := &client.Client{Transport: rt}
	_, err := c.Kernels(context.Background())
	if !errors.Is(err, api.ErrUnavailable) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Kernels() error = %v, want ErrUnavailable wrapping boom", err)
	}
	if host != api.Host {
		t.Errorf("URL host = %q, want %q", host, api.Host)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Not parallel: it sets environment variables.
func TestDefaultSocket(t *testing.T) {
	t.Setenv("QUASIM_SOCKET", "/x/y.sock")
	if got := client.DefaultSocket(); got != "/x/y.sock" {
		t.Errorf("DefaultSocket() with QUASIM_SOCKET = %q, want %q", got, "/x/y.sock")
	}
	t.Setenv("QUASIM_SOCKET", "")
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/7")
	want := "/run/user/7/quasim/quasimd.sock"
	if os.Getuid() == 0 {
		want = "/run/quasim/quasimd.sock"
	}
	if got := client.DefaultSocket(); got != want {
		t.Errorf("DefaultSocket() = %q, want %q", got, want)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", "")
	want = "/tmp/quasim-" + strconv.Itoa(os.Getuid()) + "/quasimd.sock"
	if os.Getuid() == 0 {
		want = "/run/quasim/quasimd.sock"
	}
	if got := client.DefaultSocket(); got != want {
		t.Errorf("DefaultSocket() = %q, want %q", got, want)
	}
	// The zero Client dials the default socket.
	t.Setenv("QUASIM_SOCKET", filepath.Join(t.TempDir(), "none.sock"))
	var c client.Client
	if _, err := c.Status(context.Background()); !errors.Is(err, api.ErrUnavailable) || !strings.Contains(err.Error(), "none.sock") {
		t.Errorf("zero Client Status() error = %v, want ErrUnavailable naming none.sock", err)
	}
}

func TestSocketsOrder(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	sys := client.SystemSocket()
	for _, tc := range []struct {
		name string
		uid  int
		env  func(string) string
		want []string
	}{
		{"explicit", 1000, env("QUASIM_SOCKET", "/x.sock", "XDG_RUNTIME_DIR", "/run/user/1000"), []string{"/x.sock"}},
		{"xdg", 1000, env("XDG_RUNTIME_DIR", "/run/user/1000"), []string{"/run/user/1000/quasim/quasimd.sock", sys}},
		{"tmp", 1000, env(), []string{"/tmp/quasim-1000/quasimd.sock", sys}},
		{"root", 0, env("XDG_RUNTIME_DIR", "/run/user/0"), []string{sys}},
		{"root explicit", 0, env("QUASIM_SOCKET", "/x.sock"), []string{"/x.sock"}},
	} {
		if got := client.SocketsFor(tc.uid, tc.env, "/tmp"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: sockets = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// An ordinary user with no daemon of their own reaches the system
// service; their own daemon, once it answers, is preferred; with neither,
// the error names both sockets. Not parallel: it sets the environment.
func TestSystemSocketFallback(t *testing.T) {
	userDir := filepath.Dir(socketPath(t))
	t.Setenv("QUASIM_SOCKET", "")
	t.Setenv("XDG_RUNTIME_DIR", userDir)
	user := filepath.Join(userDir, "quasim", "quasimd.sock")
	system := &fakeDaemon{}
	sysSock := serve(t, system.handler())
	client.Pretend(t.Cleanup, sysSock, 1000)
	if got := client.Sockets(); !reflect.DeepEqual(got, []string{user, sysSock}) {
		t.Fatalf("Sockets() = %q, want %q", got, []string{user, sysSock})
	}
	var c client.Client
	if _, err := c.Status(context.Background()); err != nil || len(system.reqs) != 1 || c.Dialed() != sysSock {
		t.Fatalf("no user daemon: Status() = %v via %q; want the system daemon's answer", err, c.Dialed())
	}
	// A user daemon starts: new clients use it.
	if err := os.MkdirAll(filepath.Dir(user), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", user)
	if err != nil {
		t.Fatal(err)
	}
	own := &fakeDaemon{}
	srv := &http.Server{Handler: own.handler(), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	var c2 client.Client
	if _, err := c2.Status(context.Background()); err != nil || len(own.reqs) != 1 || len(system.reqs) != 1 || c2.Dialed() != user {
		t.Fatalf("user daemon up: Status() = %v via %q; want the user daemon's answer", err, c2.Dialed())
	}
	// Neither answers: the error names both.
	client.Pretend(t.Cleanup, filepath.Join(userDir, "none.sock"), 1000)
	srv.Close()
	var c3 client.Client
	_, err = c3.Status(context.Background())
	if !errors.Is(err, api.ErrUnavailable) || !strings.Contains(err.Error(), user+": ") || !strings.Contains(err.Error(), "; nor at "+filepath.Join(userDir, "none.sock")+": ") {
		t.Errorf("no daemon: %v, want ErrUnavailable naming both sockets", err)
	}
}
