package main

import (
	"errors"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/internal/browsertest"
	"github.com/quasim/quasim/internal/testload"
)

// metricsAddr is the address --metrics-listen 127.0.0.1:0 got, from the log.
func metricsAddr(t *testing.T, d *proc) string {
	t.Helper()
	m := regexp.MustCompile(`"addr":"([0-9.:]+)"[^\n]*"message":"metrics listening"`).FindStringSubmatch(d.stderr.String())
	if m == nil {
		t.Fatal("no metrics listening line in the log")
	}
	return m[1]
}

// TestUI serves the live pages with --ui: read-only, behind the API's
// browser guard (Origin, Referer, Host), and in headless Chromium every
// chart draws, nothing leaves the page, and its reload comes back through
// the guard.
func TestUI(t *testing.T) {
	t.Parallel()
	spec := "name: sgemm\nevaluator: builtin:sgemm\nproblems: [\"128,128,128\"]\nschedule: \"@every 1h\"\nbudget: {evals: 6}\n"
	d := start(t, newDir(t, map[string]string{"sgemm.yaml": spec}), "--metrics-listen", "127.0.0.1:0", "--ui")
	waitServedKernel(t, d, "sgemm", "128,128,128")
	addr := metricsAddr(t, d)
	c := &http.Client{Timeout: 30 * time.Second}
	get := func(method, path string, hdr map[string]string, host string) (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+addr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	code, h, body := get("GET", "/ui/", nil, "")
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("GET /ui/: %d %v", code, h)
	}
	for _, want := range []string{"quasimd live", "sgemm", "128,128,128", "Served certificate", `data-refresh="15"`} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /ui/ lacks %q", want)
		}
	}
	for _, tt := range []struct {
		what, method, path string
		hdr                map[string]string
		host               string
		want               int
	}{
		{"a cross-site page's request", "GET", "/ui/", map[string]string{"Origin": "http://evil.example"}, "", 403},
		{"a request from a link", "GET", "/ui/", map[string]string{"Referer": "http://evil.example/x"}, "", 403},
		{"a rebound host name", "GET", "/ui/", nil, "evil.example:" + strings.Split(addr, ":")[1], 403},
		{"an unknown kernel", "GET", "/ui/?kernel=nosuch", nil, "", 404},
		{"a path under /ui/", "GET", "/ui/x", nil, "", 404},
		{"a write", "POST", "/ui/", nil, "", 405},
		{"a refresh too fast", "GET", "/ui/?refresh=1", nil, "", 400},
		{"the API", "GET", "/v1/status", nil, "", 404},
	} {
		if code, _, body := get(tt.method, tt.path, tt.hdr, tt.host); code != tt.want {
			t.Errorf("%s (%s %s): %d %.100s, want %d", tt.what, tt.method, tt.path, code, body, tt.want)
		}
	}

	// In the browser: the page as loaded, then open for 7 s (more on a busy
	// machine) while it reloads every 2 s.
	bin := browsertest.Chromium(t)
	rec := browsertest.NewRecorder(t)
	rec.Forward(addr)
	dom, stderr, _ := browsertest.Run(t, bin, rec, "--dump-dom", "http://"+addr+"/ui/?refresh=2")
	stderr += browsertest.Browse(t, bin, rec, testload.Scale(7*time.Second), "http://"+addr+"/ui/?refresh=2")
	charts := regexp.MustCompile(`(?s)<svg class="chart".*?</svg>`).FindAllString(dom, -1)
	if len(charts) < 4 {
		t.Errorf("%d charts on the live page, want at least 4", len(charts))
	}
	for _, s := range charts {
		n, _ := strconv.Atoi(regexp.MustCompile(`data-series="(\d+)"`).FindStringSubmatch(s)[1])
		if got := strings.Count(s, `<g class="series"`); n == 0 || got != n {
			t.Errorf("live chart declares %d series, has %d", n, got)
		}
	}
	if !regexp.MustCompile(`class="trials-table" data-src="[^"]+" data-rendered="[1-9]`).MatchString(dom) {
		t.Error("the live page's trial table did not render")
	}
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, ":CONSOLE") {
			t.Errorf("console: %s", l)
		}
	}
	if q := rec.Requests(); len(q) > 0 {
		t.Errorf("requests left the page: %q", q)
	}
	fw := rec.Forwarded()
	if len(fw) < 3 {
		t.Errorf("the page was loaded %d times (%q), want the first load, then in 7 s a load and reloads", len(fw), fw)
	}
	for _, f := range fw {
		if f != "GET /ui/?refresh=2 200" {
			t.Errorf("request to the daemon %q, want GET /ui/?refresh=2 200", f)
		}
	}
}

// --ui needs --metrics-listen: without it quasimd exits with a config error
// naming both.
func TestUINeedsListener(t *testing.T) {
	t.Parallel()
	qd, _ := binaries(t)
	dir := t.TempDir()
	out, err := exec.Command(qd, "--ui", "--socket", dir+"/s.sock", "--state-dir", dir).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitConfig || !strings.Contains(string(out), "needs --metrics-listen") {
		t.Errorf("quasimd --ui without --metrics-listen: %v %s", err, out)
	}
}
