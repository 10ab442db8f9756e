package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Chromium finds a headless Chromium: $QUASIM_CHROMIUM, else chromium or
// google-chrome on PATH; the test skips without one.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("QUASIM_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium on PATH (set QUASIM_CHROMIUM, or apt-get install chromium as .ci/run does): the report's browser tests need one")
	return ""
}

// Recorder is an HTTP proxy that refuses everything and records what was
// asked of it: Chromium is pointed at it for every URL, loopback included,
// so any request the page makes shows here.
type Recorder struct {
	mu        sync.Mutex
	seen      []string
	forward   string // host:port whose requests are passed on
	forwarded []string
	Addr      string // host:port
}

func NewRecorder(t testing.TB) *Recorder {
	r := &Recorder{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.Addr = ln.Addr().String()
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		r.mu.Lock()
		fwd := r.forward
		r.mu.Unlock()
		if fwd != "" && q.Host == fwd && q.Method != http.MethodConnect {
			sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
			httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: fwd}).ServeHTTP(sw, q)
			r.mu.Lock()
			r.forwarded = append(r.forwarded, q.Method+" "+q.URL.RequestURI()+" "+strconv.Itoa(sw.status))
			r.mu.Unlock()
			return
		}
		r.mu.Lock()
		r.seen = append(r.seen, q.Method+" "+q.Host+q.URL.Path)
		r.mu.Unlock()
		http.Error(w, "offline", http.StatusForbidden)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return r
}

// Forward makes the recorder pass the requests for host (host:port, the
// server under test) on to it, recording each with its status, instead of
// refusing them.
func (r *Recorder) Forward(host string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forward = host
}

// Forwarded are the requests passed on, as "GET /path?query 200".
func (r *Recorder) Forwarded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.forwarded...)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// browserHosts are Chromium's own services, which it calls at start
// whatever the page (the component updater, sign-in, network time) even
// with background networking off. A page's fetch of one of them would
// still show, as a violation of its Content-Security-Policy.
var browserHosts = map[string]bool{
	"update.googleapis.com": true, "accounts.google.com": true, "clients2.google.com": true,
	"safebrowsing.googleapis.com": true, "optimizationguide-pa.googleapis.com": true,
	"content-autofill.googleapis.com": true, "redirector.gvt1.com": true, "edgedl.me.gvt1.com": true,
}

// Requests are the requests the proxy saw, but Chromium's own.
func (r *Recorder) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.seen {
		host := strings.Fields(s)[1]
		host = strings.TrimSuffix(host[:strings.IndexAny(host+"/", "/")], ":443")
		if !browserHosts[host] {
			out = append(out, s)
		}
	}
	return out
}

// Chromium's own background traffic is switched off, so that what reaches
// the recorder is the page's.
var quietFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-default-apps", "--disable-extensions", "--metrics-recording-only",
	"--disable-features=OptimizationHints,MediaRouter,Translate,NetworkTimeServiceQuerying,AutofillServerCommunication",
	"--disable-client-side-phishing-detection", "--disable-domain-reliability", "--no-pings", "--hide-scrollbars",
	"--enable-logging=stderr", "--v=0",
}

// Run runs Chromium with extra flags (a URL last) through the recorder
// and returns its stdout, its stderr and how long it took.
func Run(t testing.TB, bin string, rec *Recorder, extra ...string) (string, string, time.Duration) {
	t.Helper()
	out, errs, took, err := run(bin, rec, t.TempDir(), 120*time.Second, extra)
	if err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, errs)
	}
	return out, errs, took
}

// Browse keeps a page open in Chromium for d (a live page reloading
// itself, say), then stops it, and returns its stderr.
func Browse(t testing.TB, bin string, rec *Recorder, d time.Duration, url string) string {
	t.Helper()
	_, errs, _, err := run(bin, rec, t.TempDir(), d, []string{url})
	if err != nil && !strings.Contains(err.Error(), "killed") {
		t.Fatalf("%s: %v\n%s", bin, err, errs)
	}
	return errs
}

func run(bin string, rec *Recorder, profile string, limit time.Duration, extra []string) (string, string, time.Duration, error) {
	args := append(append([]string{}, quietFlags...),
		"--user-data-dir="+profile,
		"--proxy-server=http://"+rec.Addr, "--proxy-bypass-list=<-loopback>")
	args = append(args, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	return out.String(), errb.String(), time.Since(start), err
}

// checkHead goes first in the page under test: it records script errors,
// console.error/warn and Content-Security-Policy violations (a fetch the
// policy stopped) before the page's own script runs.
const checkHead = `<script>window.__qc={errors:[],csp:[]};
addEventListener("error",function(e){__qc.errors.push(String(e.message))});
addEventListener("securitypolicyviolation",function(e){__qc.csp.push(e.violatedDirective+" "+e.blockedURI)});
["error","warn"].forEach(function(k){var f=console[k];console[k]=function(){__qc.errors.push(k+": "+Array.prototype.join.call(arguments," "));f.apply(console,arguments)}});</script>`

// checkTail goes last: it measures, in the rendered page, each chart's
// series (their bounding boxes, so a series that drew nothing shows as
// empty), each trial table's rows, and the time since navigation began.
const checkTail = `<script>(function(){var r={charts:[],tables:[],errors:__qc.errors,csp:__qc.csp};
document.querySelectorAll("svg.chart").forEach(function(s){var c={id:s.id,declared:+s.getAttribute("data-series"),series:[]};
s.querySelectorAll("g.series").forEach(function(g){var b=g.getBBox();c.series.push({name:g.getAttribute("data-name"),w:b.width,h:b.height,n:g.childElementCount})});
r.charts.push(c)});
document.querySelectorAll(".trials-table").forEach(function(h){r.tables.push({src:h.getAttribute("data-src"),rows:+(h.getAttribute("data-rendered")||0)})});
r.openMs=performance.now();var p=document.createElement("pre");p.id="quasim-check";p.textContent=JSON.stringify(r);document.body.appendChild(p)})();</script>`

type Result struct {
	Charts []struct {
		ID       string `json:"id"`
		Declared int    `json:"declared"`
		Series   []struct {
			Name string  `json:"name"`
			W    float64 `json:"w"`
			H    float64 `json:"h"`
			N    int     `json:"n"`
		} `json:"series"`
	} `json:"charts"`
	Tables []struct {
		Src  string `json:"src"`
		Rows int    `json:"rows"`
	} `json:"tables"`
	Errors []string `json:"errors"`
	CSP    []string `json:"csp"`
	OpenMs float64  `json:"openMs"`
}

var checkRe = regexp.MustCompile(`<pre id="quasim-check">(.*?)</pre>`)

// Instrument writes page, with the check scripts, to a file in dir.
func Instrument(t testing.TB, dir, page string) string {
	t.Helper()
	page = strings.Replace(page, "<head>", "<head>"+checkHead, 1)
	page = strings.Replace(page, "</body>", checkTail+"</body>", 1)
	f := filepath.Join(dir, "report.html")
	if err := os.WriteFile(f, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// Load opens page, instrumented, in Chromium and returns what the check
// script found, Chromium's stderr and its wall time.
func Load(t testing.TB, bin string, rec *Recorder, page string) (Result, string, time.Duration) {
	t.Helper()
	file := Instrument(t, t.TempDir(), page)
	dom, stderr, wall := Run(t, bin, rec, "--dump-dom", "file://"+file)
	m := checkRe.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the check script did not run; stderr:\n%s", stderr)
	}
	var r Result
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &r); err != nil {
		t.Fatalf("check result: %v", err)
	}
	return r, stderr, wall
}

// Open opens page in Chromium and checks what a reader needs:
// every chart drew each series it declares, every trial table rendered
// rows, no script error or console output, no request left the file.
func Open(t testing.TB, page string) (Result, time.Duration) {
	t.Helper()
	bin := Chromium(t)
	rec := NewRecorder(t)
	r, stderr, wall := Load(t, bin, rec, page)
	for _, c := range r.Charts {
		if c.Declared == 0 || len(c.Series) != c.Declared {
			t.Errorf("chart %s: %d series rendered, %d declared", c.ID, len(c.Series), c.Declared)
		}
		for _, s := range c.Series {
			if s.N == 0 || (s.W == 0 && s.H == 0) {
				t.Errorf("chart %s: series %q drew nothing (%d elements, %gx%g)", c.ID, s.Name, s.N, s.W, s.H)
			}
		}
	}
	for _, tb := range r.Tables {
		if tb.Rows == 0 {
			t.Errorf("trial table %s rendered no rows", tb.Src)
		}
	}
	if len(r.Errors) > 0 {
		t.Errorf("script errors: %q", r.Errors)
	}
	if len(r.CSP) > 0 {
		t.Errorf("the page tried to fetch (stopped by its policy): %q", r.CSP)
	}
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, ":CONSOLE") {
			t.Errorf("console: %s", l)
		}
	}
	if q := rec.Requests(); len(q) > 0 {
		t.Errorf("requests left the file: %q", q)
	}
	return r, wall
}

// Shoot writes one PNG per view of job anchor: the page with every other
// view hidden.
func Shoot(t testing.TB, bin string, rec *Recorder, page, dir, prefix, anchor string) {
	t.Helper()
	for _, v := range []string{"summary", "convergence", "portfolio", "parameters", "twoparam", "pareto", "certificates", "trials", "roofline", "causal", "memplans"} {
		id := anchor + "-" + v
		if v == "summary" || v == "roofline" || v == "causal" || v == "memplans" { // page-wide views
			id = v
		}
		hide := fmt.Sprintf(`<style>.view:not(#%[1]s){display:none} section.job:not(:has(#%[1]s)){display:none} section.job{border:0;margin:0} header{display:none}</style>`, id)
		p := strings.Replace(page, "</head>", hide+"</head>", 1)
		f := filepath.Join(t.TempDir(), "page.html")
		if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := filepath.Abs(filepath.Join(dir, prefix+"-"+v+".png"))
		if err != nil {
			t.Fatal(err)
		}
		Run(t, bin, rec, "--window-size=1100,760", "--screenshot="+out, "file://"+f)
		t.Logf("wrote %s", out)
	}
}
