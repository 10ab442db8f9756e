package daemon

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/internal/store/storetest"
	"github.com/quasim/quasim/internal/tuner"
)

// loadOpenAPI loads api.OpenAPI with kin-openapi and checks that it is a
// valid OpenAPI 3 document.
func loadOpenAPI(t testing.TB) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatalf("load api/openapi.json: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("api/openapi.json is not a valid OpenAPI 3 document: %v", err)
	}
	return doc
}

// TestOpenAPIRoutes: the document has every route the server serves (the
// route table and those handler registers itself), with who may call it,
// and no other.
func TestOpenAPIRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	documented := map[string]string{} // pattern: x-quasim-right
	for p, item := range doc.Paths.Map() {
		if len(item.Servers) == 1 { // the TCP listener's alone (TestOpenAPIEveryRoute)
			continue
		}
		for m, op := range item.Operations() {
			if m == http.MethodHead && item.Get != nil { // net/http serves HEAD with GET
				continue
			}
			right, _ := op.Extensions["x-quasim-right"].(string)
			documented[m+" "+p] = right
		}
	}
	for _, rt := range servedRoutes(t) {
		right, ok := documented[rt.pattern]
		switch {
		case !ok:
			t.Errorf("route %s is not in api/openapi.json (document it in openapi_gen_test.go, then go test ./daemon -run TestOpenAPIDocument -update)", rt.pattern)
		case right != rt.right:
			t.Errorf("route %s: x-quasim-right %q, want %q", rt.pattern, right, rt.right)
		}
		delete(documented, rt.pattern)
	}
	for _, p := range slices.Sorted(maps.Keys(documented)) {
		t.Errorf("api/openapi.json documents %s, which the server does not serve", p)
	}
}

// contract drives servers and validates each request and answer against
// the document with kin-openapi.
type contract struct {
	t      *testing.T
	doc    *openapi3.T
	router routers.Router
	opts   *openapi3filter.Options
	seen   map[string]map[int]bool // operation ("GET /v1/status"): statuses answered
}

// newContract loads the document and its router for t.
func newContract(t *testing.T) *contract {
	doc := loadOpenAPI(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &contract{t: t, doc: doc, router: router, seen: map[string]map[int]bool{},
		opts: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
}

// exchange is one request and the status it should get.
type exchange struct {
	method, path string
	header       map[string]string
	body         []byte // nil: none
	contentType  string // of the body; application/json by default
	// invalid: the document refuses the request too (the server's
	// refusal is one the schema states).
	invalid bool
	status  int // 0: any the operation documents
}

func (x exchange) request(t testing.TB) *http.Request {
	t.Helper()
	var body io.Reader = http.NoBody
	if x.body != nil {
		body = bytes.NewReader(x.body)
	}
	req, err := http.NewRequest(x.method, "http://"+api.Host+x.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if x.body != nil {
		req.Header.Set("Content-Type", cmp.Or(x.contentType, "application/json"))
	}
	for k, v := range x.header {
		req.Header.Set(k, v)
	}
	return req
}

// do sends x to ts, checks the status, and validates the request and the
// answer (status, headers, body) against the document.
func (c *contract) do(ts *testServer, x exchange) (int, http.Header, []byte) {
	t := c.t
	t.Helper()
	req := x.request(t)
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s: no operation of the document: %v", x.method, x.path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: c.opts}
	switch err := openapi3filter.ValidateRequest(context.Background(), in); {
	case x.invalid && err == nil:
		t.Errorf("%s %s %.80s: the document takes this request; the server refuses it", x.method, x.path, x.body)
	case !x.invalid && err != nil:
		t.Errorf("%s %s %.80s: request does not match the document: %v", x.method, x.path, x.body, err)
	}
	resp, err := ts.client.Do(x.request(t))
	if err != nil {
		t.Fatalf("%s %s: %v", x.method, x.path, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s %s: read answer: %v", x.method, x.path, err)
	}
	if x.status != 0 && resp.StatusCode != x.status {
		t.Errorf("%s %s %.80s = %d %.500s, want %d", x.method, x.path, x.body, resp.StatusCode, body, x.status)
	}
	op := route.Method + " " + route.Path
	if resp.StatusCode == http.StatusNotModified {
		// openapi3filter leaves 304 alone: check it is documented, with
		// its headers.
		r := route.Operation.Responses.Status(http.StatusNotModified)
		if r == nil {
			t.Errorf("%s: 304 is not documented", op)
		} else {
			c.checkHeaders(op+" 304", r.Value.Headers, resp.Header)
		}
		if len(body) != 0 {
			t.Errorf("%s: 304 with a body %q", op, body)
		}
	} else {
		out := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
			Body: io.NopCloser(bytes.NewReader(body)), Options: c.opts,
		}
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			t.Errorf("%s %s: the %d answer does not match the document: %v\nanswer: %.1000s", x.method, x.path, resp.StatusCode, err, body)
		}
	}
	if c.seen[op] == nil {
		c.seen[op] = map[int]bool{}
	}
	c.seen[op][resp.StatusCode] = true
	if x.method == http.MethodGet && !strings.Contains(x.path, "wait=") {
		c.head(ts, x, resp.StatusCode)
	}
	return resp.StatusCode, resp.Header, body
}

// head sends GET exchange x again as HEAD: the same status, no body, and
// an answer the document's head operation takes.
func (c *contract) head(ts *testServer, x exchange, status int) {
	t := c.t
	t.Helper()
	x.method, x.status = http.MethodHead, status
	req := x.request(t)
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		t.Errorf("HEAD %s: no operation of the document: %v", x.path, err)
		return
	}
	resp, err := ts.client.Do(x.request(t))
	if err != nil {
		t.Fatalf("HEAD %s: %v", x.path, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status || len(body) != 0 {
		t.Errorf("HEAD %s = %d with %d bytes of body, want GET's %d and none", x.path, resp.StatusCode, len(body), status)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: c.opts}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(nil)), Options: c.opts}
	if resp.StatusCode != http.StatusNotModified {
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			t.Errorf("HEAD %s: the %d answer does not match the document: %v", x.path, resp.StatusCode, err)
		}
	}
	op := route.Method + " " + route.Path
	if c.seen[op] == nil {
		c.seen[op] = map[int]bool{}
	}
	c.seen[op][resp.StatusCode] = true
}

// ok is do for a valid request that should be answered 200.
func (c *contract) ok(ts *testServer, method, path string, body []byte) []byte {
	c.t.Helper()
	_, _, out := c.do(ts, exchange{method: method, path: path, body: body, status: http.StatusOK})
	return out
}

// offRoute sends a request no operation of the document takes (an
// unknown path, a method a path does not take) and validates the answer
// against the document's response component for it.
func (c *contract) offRoute(ts *testServer, method, path string, status int, component string, wantRouteErr error) {
	t := c.t
	t.Helper()
	x := exchange{method: method, path: path}
	if _, _, err := c.router.FindRoute(x.request(t)); !errors.Is(err, wantRouteErr) {
		t.Errorf("%s %s: the document's router says %v, want %v", method, path, err, wantRouteErr)
	}
	resp, err := ts.client.Do(x.request(t))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, body, status)
	}
	r := c.doc.Components.Responses[component]
	if r == nil {
		t.Fatalf("no components/responses/%s", component)
	}
	c.checkHeaders(component, r.Value.Headers, resp.Header)
	if method == http.MethodHead {
		if len(body) != 0 {
			t.Errorf("HEAD %s: %d bytes of body", path, len(body))
		}
		return
	}
	mt := r.Value.Content.Get(resp.Header.Get("Content-Type"))
	if mt == nil {
		t.Fatalf("%s %s: Content-Type %q is not %s's", method, path, resp.Header.Get("Content-Type"), component)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, body)
	}
	if err := mt.Schema.Value.VisitJSON(v); err != nil {
		t.Errorf("%s %s: answer does not match %s: %v\n%s", method, path, component, err, body)
	}
}

// checkHeaders checks that h has each required header of hs and that
// each present one matches its schema.
func (c *contract) checkHeaders(what string, hs openapi3.Headers, h http.Header) {
	c.t.Helper()
	for _, name := range slices.Sorted(maps.Keys(hs)) {
		hd := hs[name].Value
		v := h.Get(name)
		if v == "" {
			if hd.Required {
				c.t.Errorf("%s: no %s header", what, name)
			}
			continue
		}
		var val any = v
		if hd.Schema.Value.Type.Is("integer") {
			n, err := strconv.Atoi(v)
			if err != nil {
				c.t.Errorf("%s: %s %q is not an integer", what, name, v)
				continue
			}
			val = float64(n)
		}
		if err := hd.Schema.Value.VisitJSON(val); err != nil {
			c.t.Errorf("%s: header %s %q: %v", what, name, v, err)
		}
	}
}

// reserve serves ts's server again on a socket of its own, with a handler
// built now: after the test has set the fields handler and the handlers
// read (metrics, the planner, the limiter), before any goroutine serving
// them starts.
func reserve(t testing.TB, ts *testServer) {
	t.Helper()
	dir, err := os.MkdirTemp("", "qt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	ln, err := sockapi.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: ts.handler(), ConnContext: sockapi.ConnCred, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	ts.socket = sock
	ts.client = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConnsPerHost: 1,
	}}
}

// contractServer is the daemon as the contract test drives it: the
// builtin kernels and pipeline fj; a signing key; metrics; an observation
// limiter of burst 10 on a frozen clock, so it refuses the 11th request;
// a memory planner taking 4 KiB bodies; sgemm at 128,128,128 tuned by a
// real cycle (trials, a cycle, a certificate, a served config); and the
// scheduler started, so tuning requests run.
func contractServer(t *testing.T) *testServer {
	t.Helper()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.New(t)
	sched := &scheduler{
		dir: pipelineDir(t, ""), st: st, cron: newCron(), log: zerolog.Nop(), clock: time.Now,
		tn: tuner.New(tuner.Config{Store: st, NewStrategy: defaultStrategy, Signer: key}),
	}
	ts := serveTest(t, sched, st)
	k, _ := sched.kernel("sgemm")
	var j *job
	for _, jj := range k.jobs {
		if jj.key.Problem == "128,128,128" {
			j = jj
		}
	}
	if j == nil {
		t.Fatal("no sgemm job at 128,128,128")
	}
	cy, err := sched.tn.Cycle(context.Background(), tunerJob(k.spec, j.key, j.spec), tuner.Budget{Evals: 2}, "api", 1, nil)
	if err != nil || cy.Promoted == "" {
		t.Fatalf("cycle: %+v, %v", cy, err)
	}
	sched.changed()
	ctx, cancel := context.WithCancel(context.Background())
	sched.start(ctx, func() {})
	t.Cleanup(func() {
		cancel()
		sched.stop(time.Now().Add(time.Minute))
	})
	ts.srv.setKey(key)
	ts.srv.metrics = newMetrics(sched)
	frozen := time.Now()
	ts.api.Observers = sockapi.NewLimiter(1, 10, func() time.Time { return frozen })
	ts.srv.memgraph = newMemPlanner()
	ts.srv.memgraph.maxBody = 4 << 10
	reserve(t, ts)
	return ts
}

// memGraph is a small graph with a host tensor and op durations, so a
// plan can carry every optional part: misses, layout and schedule.
const memGraph = `{"name": "contract", "ops": [{"id": "a", "duration_ns": 100000}, {"id": "b", "duration_ns": 100000}],
 "tensors": [{"id": "x", "bytes": 4096, "input": true, "consumers": ["a"]},
  {"id": "w", "bytes": 65536, "host": true, "input": true, "consumers": ["b"]},
  {"id": "y", "bytes": 4096, "producer": "a", "consumers": ["b"]},
  {"id": "z", "bytes": 4096, "producer": "b", "output": true}]}`

// TestOpenAPIContract drives the real server through every route of the
// document with valid requests and some refused ones, and validates each
// request and each answer (status, headers, body) against the document
// with kin-openapi's openapi3filter. Not driven: 500 (it needs a failing
// store), tune's 409 and 503 (a reload or a shutdown racing the request),
// an experiment's 503 (a device lock held elsewhere) and the spans' 429
// (the observations' is: the same limiter); the test logs them.
func TestOpenAPIContract(t *testing.T) {
	c := newContract(t)
	doc := c.doc
	ts := contractServer(t)
	// get and post send a request the server refuses with status; with
	// docRefuses, the document refuses it too.
	const docRefuses = true
	get := func(path string, status int, invalid ...bool) []byte {
		t.Helper()
		_, _, body := c.do(ts, exchange{method: "GET", path: path, status: status, invalid: slices.Contains(invalid, true)})
		return body
	}
	post := func(path, body string, status int, invalid ...bool) []byte {
		t.Helper()
		x := exchange{method: "POST", path: path, status: status, invalid: slices.Contains(invalid, true)}
		if body != "" {
			x.body = []byte(body)
		}
		_, _, out := c.do(ts, x)
		return out
	}

	// The daemon.
	var served map[string]any
	if err := json.Unmarshal(c.ok(ts, "GET", "/v1/openapi.json", nil), &served); err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	json.Unmarshal(api.OpenAPI, &want)
	if !reflect.DeepEqual(served, want) {
		t.Errorf("GET /v1/openapi.json is not api.OpenAPI")
	}
	c.ok(ts, "GET", "/v1/status", nil)
	c.ok(ts, "GET", "/v1/devices", nil)
	c.ok(ts, "GET", "/v1/fleet", nil)
	c.ok(ts, "POST", "/v1/reload", nil)
	c.ok(ts, "GET", "/metrics", nil)
	c.ok(ts, "GET", "/debug/pprof/goroutine", nil)
	c.ok(ts, "GET", "/debug/pprof/goroutine?debug=1", nil)
	get("/debug/pprof/nope", 404)

	// Kernels, trials and cycles.
	c.ok(ts, "GET", "/v1/kernels", nil)
	var page api.KernelsPage
	json.Unmarshal(c.ok(ts, "GET", "/v1/kernels?limit=2", nil), &page)
	if page.Next == "" {
		t.Fatalf("GET /v1/kernels?limit=2: no next page")
	}
	c.ok(ts, "GET", "/v1/kernels?cursor="+page.Next, nil)
	get("/v1/kernels?limit=0", 400, docRefuses)
	get("/v1/kernels?cursor=bogus!", 400)
	var trials api.Trials
	json.Unmarshal(c.ok(ts, "GET", "/v1/kernels/sgemm/trials?problem=128,128,128&limit=1", nil), &trials)
	if trials.Next == "" {
		t.Fatalf("GET trials?limit=1: no next page")
	}
	c.ok(ts, "GET", "/v1/kernels/sgemm/trials?cursor="+trials.Next, nil)
	get("/v1/kernels/sgemm/trials?limit=many", 400, docRefuses)
	get("/v1/kernels/nope/trials", 404)
	c.ok(ts, "GET", "/v1/kernels/sgemm/cycles?problem=128,128,128", nil)
	get("/v1/kernels/sgemm/cycles?problem=-1", 400)
	get("/v1/kernels/nope/cycles", 404)

	// Config lookups, conditional and long-polled.
	_, hdr, body := c.do(ts, exchange{method: "GET", path: "/v1/configs/sgemm?problem=128,128,128", status: 200})
	var cfg api.Config
	json.Unmarshal(body, &cfg)
	if cfg.Match != api.MatchExact || cfg.Certificate == "" {
		t.Fatalf("config of the tuned job: %s", body)
	}
	etag := hdr.Get("ETag")
	c.do(ts, exchange{method: "GET", path: "/v1/configs/sgemm?problem=128,128,128", header: map[string]string{"If-None-Match": etag}, status: 304})
	c.do(ts, exchange{method: "GET", path: "/v1/configs/sgemm?problem=128,128,128&wait=10ms", header: map[string]string{"If-None-Match": etag}, status: 304})
	c.ok(ts, "GET", "/v1/configs/sgemm?problem=200,200,200", nil)
	c.ok(ts, "GET", "/v1/configs/sgemm?problem=128,128,128&objective=energy&max_slowdown=0.1", nil)
	c.ok(ts, "GET", "/v1/configs/reduce?problem=2097152", nil)
	get("/v1/configs/sgemm?problem=128,128,128&max_slowdown=0.1", 400)
	get("/v1/configs/sgemm?problem=128,128,128&objective=energy&max_slowdown=-1", 400, docRefuses)
	get("/v1/configs/sgemm?problem=128,128,128&wait=soon", 400)
	get("/v1/configs/sgemm", 400)
	get("/v1/configs/nope?problem=1", 404)

	// Certificates.
	c.ok(ts, "GET", "/v1/certs", nil)
	c.ok(ts, "GET", "/v1/certs?kernel=sgemm", nil)
	c.ok(ts, "GET", "/v1/certs/pubkey", nil)
	c.ok(ts, "GET", "/v1/certs/"+cfg.Certificate, nil)
	get("/v1/certs/nope", 404)
	post("/v1/certs/"+cfg.Certificate+"/revoke", `{}`, 400, docRefuses)
	post("/v1/certs/nope/revoke", `{"reason": "contract"}`, 404)
	c.ok(ts, "POST", "/v1/certs/"+cfg.Certificate+"/revoke", []byte(`{"reason": "contract"}`))
	c.ok(ts, "POST", "/v1/certs/"+cfg.Certificate+"/revoke", []byte(`{"reason": "again"}`)) // already_revoked
	if _, hdr, _ := c.do(ts, exchange{method: "GET", path: "/v1/certs/" + cfg.Certificate, status: 200}); hdr.Get(api.HeaderRevoked) != "contract" {
		t.Errorf("revoked certificate: %s %q", api.HeaderRevoked, hdr.Get(api.HeaderRevoked))
	}

	// Imports and tuning.
	c.ok(ts, "POST", "/v1/kernels/sgemm/import", []byte(`{"problem": "256,256,256", "trials": [{"key": "16,16,16,1,1,False,ijk,fp32", "status": "ok", "time_ms": 2.5}]}`))
	post("/v1/kernels/sgemm/import", `{"trials": []}`, 400, docRefuses)
	post("/v1/kernels/sgemm/import", `{"problem": "128,128,128", "bogus": 1}`, 400, docRefuses)
	post("/v1/kernels/nope/import", `{"problem": "1"}`, 404)
	post("/v1/kernels/sgemm/tune", `{"budget": -1}`, 400, docRefuses)
	post("/v1/kernels/sgemm/tune", `{"problem": "1,2,3"}`, 404)
	post("/v1/kernels/nope/tune", "", 404)
	c.ok(ts, "POST", "/v1/kernels/reduce/tune", []byte(`{"problem": "2097152", "budget": 1}`))

	// Observations and spans (each spends a token of the limiter's 10).
	c.ok(ts, "POST", "/v1/observations", []byte(`{"observations": [{"kernel": "sgemm", "problem": "128,128,128", "key": "`+cfg.Key+`", "latencies_ms": [1.5, 1.6], "source": "contract"}]}`))
	post("/v1/observations", `{"observations": []}`, 400, docRefuses)
	spans, err := json.Marshal(forkJoin(0, 0, 0, 300))
	if err != nil {
		t.Fatal(err)
	}
	c.ok(ts, "POST", "/v1/spans", spans)
	post("/v1/spans", `[]`, 400, docRefuses)
	post("/v1/spans", strings.Replace(string(spans), `"fj"`, `"nope"`, -1), 404)
	c.do(ts, exchange{method: "POST", path: "/v1/spans", body: bytes.Repeat([]byte(" "), api.MaxBodyBytes+1), invalid: true, status: 413})
	// The limiter's clock stands still: the burst runs out.
	for i := 0; ; i++ {
		code, _, _ := c.do(ts, exchange{method: "POST", path: "/v1/observations", body: []byte(`{"observations": [{"kernel": "nope", "problem": "1", "key": "k", "latencies_ms": [1]}]}`)})
		if code == http.StatusTooManyRequests {
			break
		}
		if code != http.StatusNotFound || i == 10 {
			t.Fatalf("observation %d: %d, want 404 until 429", i, code)
		}
	}

	// Causal profiles and experiments.
	c.ok(ts, "GET", "/v1/causal/fj", nil)
	get("/v1/causal/nope", 404)
	c.ok(ts, "POST", "/v1/causal/builtin/experiment", []byte(`{"runs": 2, "perturbations": [{"name": "sgemm+1ms", "stage": "sgemm", "delay_ms": 1}]}`))
	post("/v1/causal/builtin/experiment", `{"runs": 1}`, 400)
	post("/v1/causal/builtin/experiment", `{"perturbations": [{"stage": "sgemm", "delay_ms": 5000}]}`, 400, docRefuses)
	post("/v1/causal/nope/experiment", "", 404)
	c.ok(ts, "GET", "/v1/causal/builtin/experiments", nil)
	get("/v1/causal/nope/experiments", 404)

	// Memory plans: every optional part, and the planner's bounds.
	c.ok(ts, "POST", "/v1/memgraph/plan?cache=32K/64/8&layout=true&bandwidth=1G&latency=1us&seed=2", []byte(memGraph))
	c.ok(ts, "POST", "/v1/memgraph/plan?search=false", chainGraph(5))
	post("/v1/memgraph/plan?format=bogus", memGraph, 400, docRefuses)
	post("/v1/memgraph/plan?layout=true", memGraph, 400)
	c.do(ts, exchange{method: "POST", path: "/v1/memgraph/plan?format=onnx", body: []byte("not a model"), contentType: "application/octet-stream", status: 400})
	post("/v1/memgraph/plan", string(chainGraph(100)), 413)
	p := ts.srv.memgraph
	for range cap(p.slots) {
		p.slots <- struct{}{}
	}
	post("/v1/memgraph/plan", memGraph, 429)
	for range cap(p.slots) {
		<-p.slots
	}

	// Refused before any handler: browsers, other methods, unknown paths.
	c.do(ts, exchange{method: "GET", path: "/v1/status", header: map[string]string{"Origin": "http://evil.example"}, status: 403})
	c.do(ts, exchange{method: "POST", path: "/v1/reload", header: map[string]string{"Referer": "http://evil.example/"}, status: 403})
	c.offRoute(ts, "DELETE", "/v1/status", 405, "MethodNotAllowed", routers.ErrMethodNotAllowed)
	c.offRoute(ts, "POST", "/v1/configs/sgemm", 405, "MethodNotAllowed", routers.ErrMethodNotAllowed)
	c.offRoute(ts, "GET", "/v1/nope", 404, "NoRoute", routers.ErrPathNotFound)

	// Zoning, on a daemon with a zoned pipeline.
	zs, z, _, ctx, _ := zoned(t, zoneDir(t))
	reserve(t, zs)
	c.ok(zs, "GET", "/v1/pipelines/infer/zoning", nil)
	c.do(zs, exchange{method: "GET", path: "/v1/pipelines/nope/zoning", status: 404})
	c.do(zs, exchange{method: "POST", path: "/v1/pipelines/infer/zoning", status: 503}) // its scheduler has not started
	zctx, cancel := context.WithCancel(ctx)
	zs.sched.start(zctx, func() {})
	t.Cleanup(func() {
		cancel()
		zs.sched.stop(time.Now().Add(time.Minute))
	})
	c.ok(zs, "POST", "/v1/pipelines/infer/zoning", nil)
	c.do(zs, exchange{method: "POST", path: "/v1/pipelines/nope/zoning", status: 404})
	waitZoning(t, z)
	var zc api.Config
	json.Unmarshal(c.ok(zs, "GET", "/v1/configs/reduce?problem=65536", nil), &zc)
	if len(zc.Zones) == 0 {
		t.Errorf("config of a zoned kernel without zones: %+v", zc)
	}
	var cs api.Certs
	json.Unmarshal(c.ok(zs, "GET", "/v1/certs", nil), &cs)
	if len(cs.Certs) == 0 {
		t.Fatal("no zoning certificate")
	}
	c.ok(zs, "GET", "/v1/certs/"+cs.Certs[0].ID, nil)
	c.ok(zs, "GET", "/v1/status", nil)

	// Every operation answered 2xx at least once; list the other
	// documented statuses not driven.
	for _, p := range slices.Sorted(maps.Keys(doc.Paths.Map())) {
		if len(doc.Paths.Value(p).Servers) == 1 { // the TCP listener's: TestOpenAPIEveryRoute
			continue
		}
		ops := doc.Paths.Value(p).Operations()
		for _, m := range slices.Sorted(maps.Keys(ops)) {
			op, key := ops[m], m+" "+p
			ok := false
			var missed []string
			for s := range c.seen[key] {
				ok = ok || s/100 == 2
			}
			for code := range op.Responses.Map() {
				// The guard's 403 is the same on every route: driven on two.
				if n, _ := strconv.Atoi(code); !c.seen[key][n] && n != http.StatusForbidden {
					missed = append(missed, code)
				}
			}
			if !ok {
				t.Errorf("%s: never answered 2xx", key)
			}
			if len(missed) > 0 {
				slices.Sort(missed)
				t.Logf("%s: documented statuses not driven: %s", key, strings.Join(missed, " "))
			}
		}
	}
}

// samplePath fills a documented path's parameters with values the
// contract server knows (or, for ids, does not).
func samplePath(p string) string {
	return strings.NewReplacer("{kernel}", "sgemm", "{pipeline}", "fj", "{id}", "nope", "{name}", "nope").Replace(p)
}

// TestOpenAPIEveryRoute checks on every path of the document what the
// guard and the mux answer whatever the route: 405 with Allow naming
// exactly the document's methods (HEAD with GET) to every other method,
// 413 to a body over the route's bound on every operation that takes a
// body, and 404 to unknown paths; and the TCP listener's two routes.
func TestOpenAPIEveryRoute(t *testing.T) {
	c := newContract(t)
	doc := c.doc
	ts := contractServer(t)
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch}
	n405, n413 := 0, 0
	for _, p := range slices.Sorted(maps.Keys(doc.Paths.Map())) {
		item := doc.Paths.Value(p)
		if len(item.Servers) == 1 { // the TCP listener's alone
			continue
		}
		ops := item.Operations()
		var allow []string
		for _, m := range methods {
			if ops[m] != nil {
				allow = append(allow, m)
			}
		}
		path := samplePath(p)
		for _, m := range methods {
			op := ops[m]
			if op == nil {
				c.offRoute(ts, m, path, 405, "MethodNotAllowed", routers.ErrMethodNotAllowed)
				n405++
				continue
			}
			if op.RequestBody == nil {
				continue
			}
			limit := api.MaxBodyBytes
			if p == "/v1/memgraph/plan" {
				limit = int(ts.srv.memgraph.maxBody)
			}
			c.do(ts, exchange{method: m, path: path, body: bytes.Repeat([]byte(" "), limit+1), invalid: true, status: 413})
			n413++
		}
		// Allow names the path's methods, as the document does.
		req, _ := http.NewRequest(http.MethodPatch, "http://"+api.Host+path, nil)
		if ops[http.MethodPatch] == nil {
			resp, err := ts.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got := strings.Split(strings.ReplaceAll(resp.Header.Get("Allow"), " ", ""), ",")
			slices.Sort(got)
			want := slices.Clone(allow)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("PATCH %s: Allow %q, want the document's %q", path, resp.Header.Get("Allow"), want)
			}
		}
	}
	for _, p := range []string{"/", "/v1", "/v1/nope", "/v2/status", "/v1/status/more", "/ui/"} {
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			c.offRoute(ts, m, p, 404, "NoRoute", routers.ErrPathNotFound)
		}
	}
	t.Logf("405 on %d method and path pairs, 413 on %d operations", n405, n413)

	// The TCP listener: /metrics and /ui/, as the document's second server.
	tcp := httptest.NewServer(sockapi.TCPHandler(ts.srv.metrics.handler(), true, ts.socket, "test"))
	defer tcp.Close()
	for _, tt := range []struct {
		method, path string
		status       int
		ctype        string
	}{
		{"GET", "/metrics", 200, "text/plain"},
		{"HEAD", "/metrics", 200, "text/plain"},
		{"GET", "/ui/", 200, "text/html"},
		{"HEAD", "/ui/", 200, "text/html"},
		{"GET", "/ui/nope", 404, ""},
		{"POST", "/metrics", 405, ""},
		{"DELETE", "/ui/", 405, ""},
		{"GET", "/v1/status", 404, ""},
	} {
		req, _ := http.NewRequest(tt.method, tcp.URL+tt.path, nil)
		resp, err := tcp.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), tt.ctype) {
			t.Errorf("TCP %s %s = %d %s, want %d %s", tt.method, tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), tt.status, tt.ctype)
		}
		docPath := strings.TrimSuffix(tt.path, "nope")
		if item := doc.Paths.Value(docPath); tt.status != 404 && (item == nil || len(item.Servers) == 0 || item.Servers[len(item.Servers)-1].URL != "http://127.0.0.1:9464") {
			t.Errorf("the document does not put %s on the TCP listener", tt.path)
		}
	}
}
