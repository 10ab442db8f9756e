package daemon

// The OpenAPI document of the socket API, api/openapi.json, is generated
// here, from three sources: the routes the server registers (the route
// table, and the routes sockapi's Handler registers itself, read from
// sockapi/server.go),
// the operations' documentation below (parameters, bodies and the statuses
// each route answers, as its handler does), and the wire types, by
// reflection, as encoding/json writes them (responses) and reads them
// (requests), described by their doc comments. TestOpenAPIDocument fails
// when the committed document differs; refresh it with
//
//	go test ./daemon -run TestOpenAPIDocument -update

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/memgraph"
)

var updateOpenAPI = flag.Bool("update", false, "rewrite ../api/openapi.json from the routes, their documentation and the wire types")

// openAPIPath is the committed document, from the daemon's directory.
const openAPIPath = "../api/openapi.json"

// quasimModule is the module path; a type's package is read from the
// directory under the module root its import path names.
const quasimModule = "github.com/quasim/quasim"

// servedRoute is a route the socket serves and who may call it.
type servedRoute struct {
	pattern string
	right   string // read, observe or write
	direct  bool   // registered by handler itself, not through the route table
}

// servedRoutes lists every route the socket serves, sorted by path and
// method: the route table, and the routes handler registers itself, read
// from its source so that none is missed. A direct route's right is the
// one its documentation gives (its handler checks it, if anything).
func servedRoutes(t testing.TB) []servedRoute {
	t.Helper()
	var s server
	var out []servedRoute
	seen := map[string]bool{}
	for _, rt := range s.routes() {
		out = append(out, servedRoute{pattern: rt.Pattern, right: rightName(rt.Right)})
		seen[rt.Pattern] = true
	}
	for _, p := range handlerPatterns(t) {
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, servedRoute{pattern: p, right: openAPIOps[p].right, direct: true})
	}
	slices.SortFunc(out, func(a, b servedRoute) int {
		am, ap, _ := strings.Cut(a.pattern, " ")
		bm, bp, _ := strings.Cut(b.pattern, " ")
		if c := strings.Compare(ap, bp); c != 0 {
			return c
		}
		return strings.Compare(am, bm)
	})
	return out
}

func rightName(r sockapi.Right) string {
	switch r {
	case sockapi.Read:
		return "read"
	case sockapi.Observe:
		return "observe"
	case sockapi.Write:
		return "write"
	}
	panic(fmt.Sprintf("right %d has no name", r))
}

// handlerPatterns reads the patterns (*sockapi.Server).Handler registers
// with mux.Handle and mux.HandleFunc from sockapi/server.go: literals, api
// constants and sockapi's constants. The route table's (rt.Pattern) and
// the catch-all "/" (404 and 405) are left out.
func handlerPatterns(t testing.TB) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "sockapi/server.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var fn *ast.FuncDecl
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && fd.Name.Name == "Handler" {
			fn = fd
		}
	}
	if fn == nil {
		t.Fatal("sockapi/server.go: no method Handler")
	}
	apiConsts, ownConsts := stringConsts(t, "../api"), stringConsts(t, "sockapi")
	var out []string
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc" {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "mux" || len(call.Args) != 2 {
			return true
		}
		where := fset.Position(call.Pos())
		var p string
		switch a := call.Args[0].(type) {
		case *ast.BasicLit:
			p, _ = strconv.Unquote(a.Value)
			if p == "/" {
				return true
			}
		case *ast.SelectorExpr:
			x, _ := a.X.(*ast.Ident)
			switch {
			case x != nil && x.Name == "rt" && a.Sel.Name == "Pattern":
				return true // the route table
			case x != nil && x.Name == "api":
				p = apiConsts[a.Sel.Name]
			}
		case *ast.Ident:
			p = ownConsts[a.Name]
		}
		if p == "" {
			t.Fatalf("%s: cannot read the pattern this route is registered with; teach handlerPatterns", where)
		}
		out = append(out, p)
		return true
	})
	if len(out) == 0 {
		t.Fatal("sockapi/server.go: Handler registers no route of its own")
	}
	return out
}

// stringConsts are the string constants declared in dir's Go files (tests
// left out), by name.
func stringConsts(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range parseDir(t, dir) {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, sp := range gd.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							out[name.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
		}
	}
	return out
}

func parseDir(t testing.TB, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	fset := token.NewFileSet()
	var out []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// opDoc documents one route.
type opDoc struct {
	id, summary, desc string
	// right is who may call a route handler registers itself; the
	// route table gives the others'.
	right  string
	query  []param
	header []param
	body   *bodyDoc
	ok     okDoc
	// errs are the error statuses the route answers, with why; 403 is
	// added to every route (the guard answers it on each).
	errs        map[int]string
	notModified string // why 304, for a conditional GET
}

type param struct {
	name, desc string
	schema     *obj
}

// bodyDoc is a request body: JSON of typ (array: a JSON array of them),
// or, with binary, raw bytes as well.
type bodyDoc struct {
	desc     string
	typ      reflect.Type
	array    *obj // keywords of the array (minItems...); non-nil: a JSON array of typ
	required bool
	binary   string // when set, application/octet-stream is taken too, and why
}

// okDoc is the 200 answer: JSON of typ, or content built by content.
type okDoc struct {
	desc    string
	typ     reflect.Type
	content func(g *docGen) *obj
	headers []string // components/headers besides Quasim-Version
}

const (
	problemDesc = "The problem size: the kernel's dims, comma-separated (x also separates), e.g. 1024,1024,1024."
	internalErr = "The daemon failed (its state file, say); the error says what."
)

func str() *obj { return newObj("type", "string") }

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// openAPIOps documents every route, by pattern. Keep each route's
// statuses to those its handler really answers.
var openAPIOps = map[string]opDoc{
	api.RouteCausal: {
		id: "getCausal", summary: "A pipeline's causal profile",
		desc: "Profiles the declared pipeline from its stored spans (POST /v1/spans): each kernel's share of the end-to-end time, its time on the critical path, its influence, its virtual-speedup curve and the gain predicted at its tuned time, each as a spread over the iterations.",
		ok:   okDoc{typ: typeOf[api.Causal]()},
		errs: map[int]string{404: "The pipeline is not declared (a pipeline file in the spec dir declares it).", 500: internalErr},
	},
	api.RouteCausalExperiment: {
		id: "postExperiment", summary: "Run a perturbation experiment",
		desc: "Runs the builtin pipeline, or one an exec harness declared, at its jobs' served configs, paired with each perturbation (a delay after a stage's kernel, or another config), while holding the device's lock; stores the report and answers it. It takes as long as the runs do.",
		body: &bodyDoc{typ: typeOf[api.ExperimentRequest](), desc: "Every field is optional; no body runs the pipeline's own perturbations 10 times."},
		ok:   okDoc{typ: typeOf[api.Experiment]()},
		errs: map[int]string{
			400: "A malformed body, runs outside 2 to 1000, a perturbation that names no stage of the pipeline, gives both or neither of delay_ms and config, a delay outside 0 to 1000 ms or a config key not of the kernel's space, or baseline with perturbations.",
			404: "quasimd cannot run the pipeline: it runs only the builtin pipeline and those exec harnesses declare.",
			500: internalErr,
			503: "The device's lock could not be taken.",
		},
	},
	api.RouteCausalExperiments: {
		id: "listExperiments", summary: "Experiments run", desc: "The pipeline's stored experiments, newest first.",
		ok:   okDoc{typ: typeOf[api.Experiments]()},
		errs: map[int]string{404: "The pipeline has no experiments (for the builtin pipeline the list is empty instead).", 500: internalErr},
	},
	api.RouteCerts: {
		id: "listCerts", summary: "Certificates", desc: "Every certificate in the store, revoked ones too.",
		query: []param{{"kernel", "Only the certificates of this kernel (a zoned pipeline's are under pipeline/NAME).", str()}},
		ok:    okDoc{typ: typeOf[api.Certs]()},
		errs:  map[int]string{500: internalErr},
	},
	api.RouteCertPubkey: {
		id: "getCertPubkey", summary: "The daemon's signing key", desc: "The public key certificates are signed with, to verify them offline.",
		ok: okDoc{typ: typeOf[api.Pubkey]()},
	},
	api.RouteCert: {
		id: "getCert", summary: "One certificate", right: "read",
		desc: "The certificate exactly as signed, in its canonical JSON (keys sorted), so its bytes verify offline against the key of GET /v1/certs/pubkey. A revoked certificate is served unchanged, with the reason in Quasim-Revoked.",
		ok:   okDoc{typ: typeOf[certs.Certificate](), headers: []string{api.HeaderRevoked}},
		errs: map[int]string{404: "No certificate has this id.", 500: internalErr},
	},
	api.RouteCertRevoke: {
		id: "revokeCert", summary: "Revoke a certificate",
		desc: "Revokes the certificate: a job that served its config falls back to its next certified config, or to the default, and a re-verification is queued. Revoking again changes nothing (already_revoked).",
		body: &bodyDoc{typ: typeOf[api.RevokeRequest](), required: true},
		ok:   okDoc{typ: typeOf[api.RevokeResponse]()},
		errs: map[int]string{400: "A malformed body, or no reason.", 404: "No certificate has this id.", 500: internalErr},
	},
	api.RouteConfig: {
		id: "getConfig", summary: "The config a runtime should use",
		desc: "The job's served config at the problem, else the served config of the nearest tuned problem (verified at this problem in the background), else the spec's default. The answer carries an ETag; a request whose If-None-Match equals it gets 304, at once or, with wait, when nothing changed within that time: a runtime long-polls this way to pick up promoted configs.",
		query: []param{
			{"problem", problemDesc + " Required when the kernel has several problems.", str()},
			{"device", "The device class; the kernel's own by default.", str()},
			{"objective", "Choose from the job's (time, energy) front of certified configs: time, energy, edp or a weighted sum such as 0.7*time + 0.3*energy.", str()},
			{"max_slowdown", "With objective: the most the chosen config may be slower than the fastest, a fraction (0.05 for 5%).", newObj("type", "number", "minimum", 0)},
			{"wait", "With If-None-Match: how long to wait for a change before answering 304, a Go duration such as 30s (at most 5m).", str()},
		},
		header: []param{{"If-None-Match", "The ETag of the answer the runtime holds.", str()}},
		ok:     okDoc{typ: typeOf[api.Config](), headers: []string{"ETag"}},
		errs: map[int]string{
			400: "No problem while the kernel has several, a malformed problem or one with the wrong number of dims, a malformed wait, or a bad objective or max_slowdown.",
			404: "The kernel is not loaded, or has no jobs.",
			500: internalErr,
		},
		notModified: "If-None-Match equals the answer's ETag: at once without wait, else when nothing changed within wait.",
	},
	api.RouteDevices: {
		id: "getDevices", summary: "Devices and their classes",
		desc: "The CPU and the NVIDIA GPUs as quasimd finds them now, and the OpenCL devices its worker found, each with its device class.",
		ok:   okDoc{typ: typeOf[api.Devices]()},
	},
	api.RouteFleet: {
		id: "getFleet", summary: "This node's part in its fleet", desc: "enabled is false, and the rest empty, when the daemon runs alone.",
		ok: okDoc{typ: typeOf[api.FleetStatus]()},
	},
	api.RouteKernels: {
		id: "listKernels", summary: "Kernels and their jobs",
		desc: "Without limit and cursor, every kernel with all its jobs, as an array. With either, a page (KernelsPage) of at most limit jobs, kernel after kernel; next is the cursor of the page after it.",
		query: []param{
			{"limit", "The most jobs in the page (default 1000).", newObj("type", "integer", "minimum", 1, "maximum", api.MaxJobsLimit)},
			{"cursor", "The next of the page before.", str()},
		},
		ok: okDoc{content: func(g *docGen) *obj {
			return jsonContent(newObj("oneOf", []any{
				newObj("type", "array", "items", g.ref(typeOf[api.Kernel](), false), "description", "Without limit and cursor: every kernel."),
				g.ref(typeOf[api.KernelsPage](), false),
			}))
		}},
		errs: map[int]string{400: "A limit outside 1 to 10000, or a cursor this daemon did not make or whose job is no longer loaded.", 500: internalErr},
	},
	api.RouteKernelCycles: {
		id: "listCycles", summary: "A kernel's tuning cycles",
		query: []param{{"problem", problemDesc + " Only that problem's cycles.", str()}},
		ok:    okDoc{typ: typeOf[api.Cycles]()},
		errs:  map[int]string{400: "A malformed problem.", 404: "The kernel is not loaded, or has no job at the problem.", 500: internalErr},
	},
	api.RouteImport: {
		id: "importTrials", summary: "Import recorded trials",
		desc: "Stores recorded trials (a Kernel Tuner cache or FAIR T4 file, as quasimctl import reads them) for one problem and device. Keys not of the kernel's space, and keys already stored, are skipped. Of a trial, key, status, time_ms, times_ms, cost_s, error, at, energy_mj, power_w, phases_ms and observables are stored; its other fields are ignored.",
		body: &bodyDoc{typ: typeOf[api.ImportRequest](), required: true},
		ok:   okDoc{typ: typeOf[api.ImportResponse]()},
		errs: map[int]string{
			400: "A malformed body, no problem, a malformed problem, a device with | or a newline, or a trial with an unknown status or an ok one without a positive time_ms.",
			404: "The kernel is not loaded, or has no job at the problem.",
			500: internalErr,
		},
	},
	api.RouteKernelTrials: {
		id: "listTrials", summary: "A kernel's measured configs",
		desc: "A page of at most limit trials, job after job in insertion order; next is the cursor of the page after it.",
		query: []param{
			{"problem", problemDesc + " Only that problem's trials.", str()},
			{"limit", "The most trials in the page (default 1000).", newObj("type", "integer", "minimum", 1, "maximum", api.MaxTrialsLimit)},
			{"cursor", "The next of the page before.", str()},
		},
		ok:   okDoc{typ: typeOf[api.Trials]()},
		errs: map[int]string{400: "A malformed problem, a limit outside 1 to 10000, or a cursor this daemon did not make or whose job the kernel no longer lists.", 404: "The kernel is not loaded, or has no job at the problem.", 500: internalErr},
	},
	api.RouteKernelTune: {
		id: "tune", summary: "Start a cycle now",
		desc: "Queues a tuning cycle of each job of the kernel (or of the problem's job), with the spec's budget or the one given; a job with a cycle running gets the next.",
		body: &bodyDoc{typ: typeOf[api.TuneRequest](), desc: "Every field is optional; an empty problem tunes every problem."},
		ok:   okDoc{typ: typeOf[api.TuneResponse]()},
		errs: map[int]string{
			400: "A malformed body, a negative budget, a malformed problem, or a kernel without an evaluator (served, not tuned).",
			404: "The kernel is not loaded, or has no job at the problem.",
			409: "A job was reloaded away meanwhile.",
			503: "The daemon is shutting down.",
		},
	},
	api.RouteMemgraphPlan: {
		id: "planMemgraph", summary: "Plan a kernel graph's memory", right: "read",
		desc: "Plans where the tensors of a graph of kernels live in one arena. Any local reader may plan, so the work is bounded: the body (16 MiB), the tensors and ops (100000 each), the search's time (timeout) and the plans at once (2; more get 429). docs/kernel-authors/memgraph.md states the bounds.",
		query: []param{
			{"format", "The body's format.", newObj("type", "string", "enum", []string{"json", "onnx", "tflite"}, "default", "json")},
			{"name", "The graph's name, for an ONNX or TFLite model (default model).", str()},
			{"seed", "The search's seed (default 1): a plan is reproducible for a graph, seed and a search the deadline did not stop.", newObj("type", "integer", "minimum", 0)},
			{"search", "false: the better baseline only, no search.", newObj("type", "boolean", "default", true)},
			{"timeout", "The search's time, a Go duration such as 2s (default 5s, at most 30s); the search then answers its best plan so far, with stopped set.", str()},
			{"dim", "NAME=VALUE: an ONNX dim left open (repeatable).", newObj("type", "array", "items", str())},
			{"value", "NAME=V[,V...]: the value of an integer ONNX graph input every run passes (repeatable); an If whose condition follows from it takes one branch, and only that branch is planned.", newObj("type", "array", "items", str())},
			{"unknown", "The value of the ONNX dims left open that dim does not give.", newObj("type", "integer", "minimum", 0)},
			{"cache", "Add the plan's cache-miss estimate for this hierarchy: SIZE/LINE/WAYS,... such as 48K/64/12,2M/64/16 (0 ways: fully associative).", str()},
			{"layout", "With cache: re-place tensors to lower the estimated misses without raising the peak.", newObj("type", "boolean", "default", false)},
			{"bandwidth", "Add the prefetch schedule of the host tensors' copies at this many bytes a second (K, M, G and T are powers of 1024).", str()},
			{"cap", "With bandwidth: the device memory the schedule may use, bytes.", str()},
			{"latency", "With bandwidth: each copy's latency, a Go duration such as 10us.", str()},
		},
		body: &bodyDoc{typ: typeOf[memgraph.Graph](), required: true, desc: "The graph in memgraph's JSON format (memgraph/doc.go), or with format onnx or tflite the model file itself.", binary: "An ONNX or TFLite model (format=onnx or format=tflite)."},
		ok:   okDoc{typ: typeOf[api.MemPlan]()},
		errs: map[int]string{
			400: "A bad query parameter, a body that does not read as a graph of the format or arrive within 30s, more tensors or ops than the daemon plans, or a graph the planner refuses.",
			413: "The body is over 16 MiB.",
			429: "As many plans as run at once are running; retry after Retry-After.",
			500: "The planner failed: a bug.",
		},
	},
	api.RouteObservations: {
		id: "postObservations", summary: "Report latencies and errors",
		desc: "Stores what runtimes measured of served configs. A served config found drifting is marked stale and re-tuned; one whose reported error is above its certificate's bound loses its certificate. Each request spends a token of the caller's uid (one more per 1000 latencies).",
		body: &bodyDoc{typ: typeOf[api.ObservationsRequest](), required: true},
		ok:   okDoc{typ: typeOf[api.ObservationsResponse]()},
		errs: map[int]string{
			400: "A malformed body, no observations, a malformed problem or key, no latencies, a latency that is not a positive time, an error that is not finite and >= 0, or too many latencies in one request.",
			404: "An observation names a kernel that is not loaded, or a problem or device it has no job at.",
			429: "The caller's uid is over its rate (quasimd --observe-rate, --observe-burst); Retry-After says when to retry, unless the request alone is over the burst.",
			500: internalErr,
		},
	},
	api.RouteOpenAPI: {
		id: "getOpenAPI", summary: "This document", desc: "The OpenAPI document of the socket API, the one in api/openapi.json.",
		ok: okDoc{content: func(*docGen) *obj {
			return jsonContent(newObj("type", "object", "description", "An OpenAPI 3.0 document."))
		}},
	},
	api.RoutePipelineZoning: {
		id: "getZoning", summary: "A zoned pipeline's precision map",
		ok:   okDoc{typ: typeOf[api.Zoning]()},
		errs: map[int]string{404: "The pipeline is not declared, or has no zoning section."},
	},
	api.RoutePipelineRezone: {
		id: "rezone", summary: "Tune the precision map again", desc: "Starts tuning the pipeline's precision map again, and answers the zoning as it starts.",
		ok:   okDoc{typ: typeOf[api.Zoning]()},
		errs: map[int]string{404: "The pipeline is not declared, or has no zoning section.", 503: "The daemon's scheduler has not started."},
	},
	api.RouteReload: {
		id: "reload", summary: "Re-read the kernel specs", desc: "Re-reads the kernel specs and pipeline files and their schedules, as SIGHUP does.",
		ok: okDoc{typ: typeOf[api.ReloadResponse]()},
	},
	api.RouteSpans: {
		id: "postSpans", summary: "Spans of a pipeline",
		desc: "Stores one batch of spans of a declared pipeline, for causal profiling; the oldest batches beyond the pipeline's retention are dropped. Each request spends a token of the caller's uid (one more per 1000 spans). A bad span is named by index and field, and nothing of the batch is stored.",
		body: &bodyDoc{typ: typeOf[causal.Span](), required: true, array: newObj("minItems", 1, "maxItems", causal.MaxSpans), desc: "A JSON array of spans of one pipeline."},
		ok:   okDoc{typ: typeOf[api.SpansResponse]()},
		errs: map[int]string{
			400: "The body is not a JSON array of valid spans of one pipeline (the error names the first bad span's index and field), or holds more spans than the pipeline keeps.",
			404: "The spans' pipeline is not declared.",
			413: "The body is over 8 MiB (api.MaxBodyBytes), declared or read.",
			429: "The caller's uid is over its rate (quasimd --observe-rate, --observe-burst); Retry-After says when to retry, unless the request alone is over the burst.",
			500: internalErr,
		},
	},
	api.RouteStatus: {
		id: "getStatus", summary: "Version, uptime, directories, counts and health",
		ok:   okDoc{typ: typeOf[api.Status]()},
		errs: map[int]string{500: internalErr},
	},
	sockapi.RouteProfile: {
		id: "getProfile", summary: "A Go runtime profile of the daemon", right: "write",
		desc: "A profile of the Go runtime (heap, allocs, goroutine, threadcreate, block, mutex) in pprof's format, for go tool pprof; with debug > 0, as text.",
		query: []param{
			{"gc", "1: run a garbage collection first (for heap).", str()},
			{"debug", "0: pprof's format; more: text.", newObj("type", "integer", "default", 0)},
		},
		ok: okDoc{desc: "The profile.", content: func(*docGen) *obj {
			return newObj(
				"application/octet-stream", newObj("schema", newObj("type", "string", "format", "binary", "description", "pprof's format (debug=0).")),
				"text/plain", newObj("schema", newObj("type", "string", "description", "debug > 0.")),
			)
		}},
		errs: map[int]string{404: "No profile has this name."},
	},
	"GET /metrics": {
		id: "getMetrics", summary: "Prometheus metrics", right: "read",
		desc: "The daemon's metrics in Prometheus' text format (docs/operators/metrics.md lists them). With --metrics-listen, the same is served on that TCP address.",
		ok: okDoc{desc: "The metrics.", content: func(*docGen) *obj {
			return newObj("text/plain", newObj("schema", newObj("type", "string", "description", "Prometheus' text exposition format.")))
		}},
	},
}

// reqRequired are the fields a request must give, by Go type: those the
// daemon refuses the request without. (A response's required fields are
// those encoding/json always writes.)
var reqRequired = map[string][]string{
	"api.ImportRequest":       {"problem"},
	"api.Trial":               {"key", "status"},
	"api.RevokeRequest":       {"reason"},
	"api.ObservationsRequest": {"observations"},
	"api.Observation":         {"kernel", "problem", "key", "latencies_ms"},
	"api.Perturbation":        {"stage"},
	"causal.Span":             {"id", "pipeline", "kernel"},
	"memgraph.Op":             {"id"},
	"memgraph.Tensor":         {"id"},
}

// reqRules are bounds a request's field must keep, by Go type and field.
var reqRules = map[string]*obj{
	"api.TuneRequest.Budget":               newObj("minimum", 0),
	"api.ImportRequest.Problem":            newObj("minLength", 1),
	"api.RevokeRequest.Reason":             newObj("minLength", 1),
	"api.ObservationsRequest.Observations": newObj("minItems", 1),
	"api.Observation.LatenciesMS":          newObj("minItems", 1),
	"api.Observation.Error":                newObj("minimum", 0),
	"api.ExperimentRequest.Runs":           newObj("minimum", 0, "maximum", api.MaxExperimentRuns),
	"api.Perturbation.DelayMS":             newObj("minimum", 0, "maximum", 1000),
	"causal.Span.ID":                       newObj("minimum", 1),
	"causal.Span.Iteration":                newObj("minimum", 0),
	"memgraph.Graph.Order":                 newObj("enum", []string{"fixed", "free"}),
}

// fieldTypes give the JSON of json.RawMessage fields: what the daemon
// marshals into them.
var fieldTypes = map[string]reflect.Type{
	"api.MemPlan.Schedule": typeOf[memgraph.Schedule](),
	"api.MemPlan.Misses":   typeOf[memgraph.MissEstimate](),
	"api.MemPlan.Layout":   typeOf[memgraph.LayoutReport](),
}

// pathParams describe the path parameters, by name.
var pathParams = map[string]string{
	"kernel":   "A loaded kernel spec's name.",
	"pipeline": "A declared pipeline's name (a pipeline file of the spec dir, or builtin).",
	"id":       "A certificate's id: the hex SHA-256 of its body.",
	"name":     "A Go runtime profile: heap, allocs, goroutine, threadcreate, block or mutex.",
}

const openAPIIntro = `quasimd's socket API: JSON over HTTP/1.1 on the daemon's Unix socket (quasimctl socket prints its path), e.g. curl --unix-socket SOCK http://quasimd/v1/status. docs/api.md is the overview.

Every response carries Quasim-Version, the daemon's version. Every error (a status other than 2xx and 304) carries an Error body, {"error": "...", "code": "..."}. A request with Origin or Referer, or a Host other than quasimd or localhost, gets 403 on every route, so a web page cannot reach the socket. A GET route also answers HEAD (its head operation). Another method on a known path gets 405 with Allow (components/responses/MethodNotAllowed; x-quasim-other-methods on each path), and an unknown path 404 (components/responses/NoRoute). A body over its bound is 413 on every route that takes one.

The same daemon may also listen on TCP (quasimd --metrics-listen, the second server): only GET /metrics there, and with --ui the pages under /ui/, whose path names that server alone.

Who may call is each operation's x-quasim-right: read, anyone who can connect; observe, any local uid, rate-limited per uid (quasimd --observe-rate, --observe-burst); write, uid 0, the daemon's own uid, members of group quasim (--operator-group) and uids given with --operator, read from the socket's peer credentials (SO_PEERCRED). Others get 403.

Request bodies are at most 8 MiB (api.MaxBodyBytes; POST /v1/memgraph/plan takes 16 MiB) and may not carry unknown fields. A field whose Go type is a slice, map or pointer and that is not omitted when empty may be null.`

// docGen builds the document.
type docGen struct {
	t       testing.TB
	docs    map[string]string   // "pkg.Type" and "pkg.Type.Field": doc comments
	enums   map[string][]string // "pkg.Type": its string constants
	read    map[string]bool     // packages whose docs are read
	schemas *obj                // components/schemas
	names   map[schemaKey]string
}

type schemaKey struct {
	t  reflect.Type
	in bool // as a request reads it
}

// openAPIDocument generates the document.
func openAPIDocument(t testing.TB) []byte {
	t.Helper()
	g := &docGen{t: t, docs: map[string]string{}, enums: map[string][]string{}, read: map[string]bool{}, schemas: newObj(), names: map[schemaKey]string{}}
	routes := servedRoutes(t)
	served := map[string]bool{}
	paths := newObj()
	type pending struct {
		op *obj
		b  *bodyDoc
	}
	var bodies []pending
	for _, rt := range routes {
		served[rt.pattern] = true
		d, ok := openAPIOps[rt.pattern]
		if !ok {
			t.Fatalf("route %s is not documented: add it to openAPIOps", rt.pattern)
		}
		if rt.direct && d.right == "" {
			t.Fatalf("route %s: handler registers it itself; its documentation must give its right", rt.pattern)
		}
		if !rt.direct && d.right != "" && d.right != rt.right {
			t.Fatalf("route %s: documented right %s, the route table's %s", rt.pattern, d.right, rt.right)
		}
		method, p, _ := strings.Cut(rt.pattern, " ")
		item, _ := paths.get(p)
		if item == nil {
			item = newObj()
			paths.set(p, item)
		}
		op := newObj("operationId", d.id, "summary", d.summary)
		if d.desc != "" {
			op.set("description", d.desc)
		}
		op.set("x-quasim-right", rt.right)
		var params []any
		for _, seg := range strings.Split(p, "/") {
			if name, ok := strings.CutPrefix(seg, "{"); ok {
				name = strings.TrimSuffix(name, "}")
				params = append(params, newObj("name", name, "in", "path", "required", true, "description", pathParams[name], "schema", str()))
			}
		}
		for _, q := range d.query {
			params = append(params, newObj("name", q.name, "in", "query", "description", q.desc, "schema", q.schema))
		}
		for _, h := range d.header {
			params = append(params, newObj("name", h.name, "in", "header", "description", h.desc, "schema", h.schema))
		}
		if len(params) > 0 {
			op.set("parameters", params)
		}
		if d.body != nil {
			op.set("requestBody", nil) // its place; built once every response schema is, see ref
			bodies = append(bodies, pending{op, d.body})
		}
		op.set("responses", g.responses(rt, d))
		item.(*obj).set(strings.ToLower(method), op)
		if method == http.MethodGet {
			item.(*obj).set("head", headOp(op))
		}
		item.(*obj).set("x-quasim-other-methods", "405, components/responses/MethodNotAllowed, with Allow")
	}
	// The TCP listener (--metrics-listen): /metrics, and /ui/ with --ui.
	tcp := newObj("url", "http://127.0.0.1:9464", "description", "quasimd --metrics-listen ADDR: GET /metrics, and with --ui the read-only pages under /ui/ (for localhost); no other route, no peer credentials.")
	sock := newObj("url", "http://"+api.Host, "description", "The daemon's Unix socket; the Host is quasimd (or localhost).")
	if m, ok := paths.get("/metrics"); ok {
		m.(*obj).set("servers", []any{sock, tcp})
	}
	uiOK := newObj("description", "The HTML report of every kernel, or of those the query names; it reloads itself.",
		"content", newObj("text/html", newObj("schema", str())))
	uiGet := newObj("operationId", "getUI", "summary", "The read-only pages of the tuning (TCP listener with --ui only)",
		"x-quasim-right", "read",
		"responses", newObj("200", uiOK, "404", newObj("description", "A page under /ui/ other than /ui/ itself.")))
	paths.set("/ui/", newObj("servers", []any{tcp}, "get", uiGet, "head", headOp(uiGet),
		"x-quasim-other-methods", "405 (text/plain, with Allow)"))
	for p := range openAPIOps {
		if !served[p] {
			t.Fatalf("openAPIOps documents %s, which the server does not serve", p)
		}
	}
	for _, b := range bodies {
		b.op.set("requestBody", g.requestBody(b.b))
	}
	errRef := g.ref(typeOf[api.Error](), false)
	doc := newObj(
		"openapi", "3.0.3",
		"info", newObj("title", "quasimd socket API", "version", "1", "description", openAPIIntro),
		"servers", []any{sock},
		"paths", paths,
		"components", newObj(
			"schemas", g.schemas,
			"responses", newObj(
				"NoRoute", errorResponse("No route has this path (any method).", errRef),
				"MethodNotAllowed", errorResponse("The path is a route's, but not for this method; Allow lists those it takes (code invalid_argument).", errRef, "Allow"),
			),
			"headers", newObj(
				api.HeaderVersion, newObj("description", "The daemon's version; on every response.", "required", true, "schema", str()),
				"ETag", newObj("description", "A hash of the answer, for If-None-Match.", "required", true, "schema", str()),
				"Retry-After", newObj("description", "Seconds to wait before retrying.", "schema", newObj("type", "integer", "minimum", 1)),
				"Allow", newObj("description", "The methods the path takes.", "required", true, "schema", str()),
				api.HeaderRevoked, newObj("description", "On a revoked certificate: why it was revoked.", "schema", str()),
			),
		),
	)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// responses documents 200 (and 304) and the errors of route rt.
func (g *docGen) responses(rt servedRoute, d opDoc) *obj {
	out := newObj()
	ok := newObj("description", cmp.Or(d.ok.desc, "OK."))
	hdrs := newObj(api.HeaderVersion, headerRef(api.HeaderVersion))
	for _, h := range d.ok.headers {
		hdrs.set(h, headerRef(h))
	}
	ok.set("headers", hdrs)
	if d.ok.content != nil {
		ok.set("content", d.ok.content(g))
	} else {
		ok.set("content", jsonContent(g.ref(d.ok.typ, false)))
	}
	out.set("200", ok)
	if d.notModified != "" {
		out.set("304", newObj("description", d.notModified, "headers", newObj(api.HeaderVersion, headerRef(api.HeaderVersion), "ETag", headerRef("ETag"))))
	}
	errs := map[int]string{http.StatusForbidden: forbidden(rt.right)}
	if d.body != nil {
		errs[http.StatusRequestEntityTooLarge] = "The body is over 8 MiB (api.MaxBodyBytes), declared or read."
	}
	for s, why := range d.errs {
		if s == http.StatusForbidden {
			g.t.Fatalf("route %s: 403 is documented for every route", rt.pattern)
		}
		errs[s] = why
	}
	errRef := g.ref(typeOf[api.Error](), false)
	for _, s := range slices.Sorted(maps.Keys(errs)) {
		var extra []string
		if s == http.StatusTooManyRequests {
			extra = append(extra, "Retry-After")
		}
		out.set(strconv.Itoa(s), errorResponse(errs[s], errRef, extra...))
	}
	return out
}

// headOp is the HEAD of GET operation op: its statuses and headers, no
// body.
func headOp(op *obj) *obj {
	id, _ := op.get("operationId")
	sum, _ := op.get("summary")
	h := newObj("operationId", id.(string)+"Head", "summary", "HEAD of "+sum.(string)+": the GET's status and headers, no body")
	for _, k := range []string{"parameters", "x-quasim-right"} {
		if v, ok := op.get(k); ok {
			h.set(k, v)
		}
	}
	rs, _ := op.get("responses")
	out := newObj()
	for _, e := range rs.(*obj).kv {
		code, r := e.k, e.v
		bare := newObj()
		for _, k := range []string{"description", "headers"} {
			if v, ok := r.(*obj).get(k); ok {
				bare.set(k, v)
			}
		}
		out.set(code, bare)
	}
	h.set("responses", out)
	return h
}

func forbidden(right string) string {
	why := "The request carries Origin or Referer (a browser), or its Host is not quasimd or localhost"
	switch right {
	case "observe":
		why += ", or the socket reported no credentials of the caller"
	case "write":
		why += ", or the caller may not write (uid 0, the daemon's uid, group quasim and --operator uids may)"
	}
	return why + "."
}

func errorResponse(desc string, errRef *obj, headers ...string) *obj {
	h := newObj(api.HeaderVersion, headerRef(api.HeaderVersion))
	for _, name := range headers {
		h.set(name, headerRef(name))
	}
	return newObj("description", desc, "headers", h, "content", jsonContent(errRef))
}

func headerRef(name string) *obj { return newObj("$ref", "#/components/headers/"+name) }

func jsonContent(schema *obj) *obj {
	return newObj("application/json", newObj("schema", schema))
}

func (g *docGen) requestBody(b *bodyDoc) *obj {
	schema := g.ref(b.typ, true)
	if b.array != nil {
		schema = newObj("type", "array", "items", schema)
		for _, e := range b.array.kv {
			schema.set(e.k, e.v)
		}
	}
	content := jsonContent(schema)
	if b.binary != "" {
		content.set("application/octet-stream", newObj("schema", newObj("type", "string", "format", "binary", "description", b.binary)))
	}
	out := newObj()
	if b.desc != "" {
		out.set("description", b.desc)
	}
	return out.set("required", b.required).set("content", content)
}

// qualified names t as its package's doc does: "api.Status".
func qualified(t reflect.Type) string {
	return path.Base(t.PkgPath()) + "." + t.Name()
}

// ref is a reference to t's schema, defined on first use. A request's
// schema of a type responses use too is named with Input.
func (g *docGen) ref(t reflect.Type, in bool) *obj {
	key := schemaKey{t, in}
	name, ok := g.names[key]
	if !ok {
		if t.Kind() != reflect.Struct || t.Name() == "" {
			g.t.Fatalf("%v: only named structs get a schema of their own", t)
		}
		name = t.Name()
		if t.PkgPath() != quasimModule+"/api" {
			name = qualified(t)
		}
		if in && g.names[schemaKey{t, false}] != "" {
			name += "Input"
		}
		if _, taken := g.schemas.get(name); taken {
			g.t.Fatalf("%v: schema name %s is taken (a request's schema defined before the responses' of the same type?)", t, name)
		}
		g.names[key] = name
		g.schemas.set(name, nil) // its place, and the name for recursive uses
		g.schemas.set(name, g.object(t, in))
	}
	return newObj("$ref", "#/components/schemas/"+name)
}

var (
	timeType       = reflect.TypeFor[time.Time]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	marshalerType  = reflect.TypeFor[json.Marshaler]()
	textMarshaler  = reflect.TypeFor[encoding.TextMarshaler]()
)

// jsonField is one field as encoding/json sees it.
type jsonField struct {
	name  string
	goKey string // "pkg.Type.Field": its doc and rules
	typ   reflect.Type
	omit  bool // omitempty or omitzero: absent when empty
}

// fields lists t's fields as encoding/json writes them, embedded structs'
// fields promoted.
func (g *docGen) fields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			g.loadDocs(f.Type.PkgPath())
			out = append(out, g.fields(f.Type)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		jf := jsonField{name: name, goKey: qualified(t) + "." + f.Name, typ: f.Type}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty", "omitzero":
				jf.omit = true
			case "string":
				g.t.Fatalf("%s: the string option is not handled", jf.goKey)
			}
		}
		out = append(out, jf)
	}
	seen := map[string]bool{}
	for _, f := range out {
		if seen[f.name] {
			g.t.Fatalf("%v: two fields named %s: not handled", t, f.name)
		}
		seen[f.name] = true
	}
	return out
}

// object is struct t's schema: its fields, required when encoding/json
// always writes them (a response) or when the daemon refuses a request
// without them; no other property, as the daemon's decoders refuse
// unknown fields and its encoders write none.
func (g *docGen) object(t reflect.Type, in bool) *obj {
	g.loadDocs(t.PkgPath())
	o := newObj("type", "object")
	if d := g.docs[qualified(t)]; d != "" {
		o.set("description", d)
	}
	props := newObj()
	var required []string
	want := reqRequired[qualified(t)]
	for _, f := range g.fields(t) {
		ft := f.typ
		if ov, ok := fieldTypes[f.goKey]; ok {
			ft = ov
		} else if ft == rawMessageType {
			g.t.Fatalf("%s: a json.RawMessage needs its type in fieldTypes", f.goKey)
		}
		s := g.schema(ft, in)
		if !in && !f.omit && nilable(f.typ) {
			s = nullable(s)
		}
		if d := g.docs[f.goKey]; d != "" {
			s = describe(s, d)
		}
		if r := reqRules[f.goKey]; in && r != nil {
			for _, e := range r.kv {
				s.set(e.k, e.v)
			}
		}
		props.set(f.name, s)
		if !in && !f.omit || in && slices.Contains(want, f.name) {
			required = append(required, f.name)
		}
	}
	if in {
		for _, w := range want {
			if !slices.Contains(required, w) {
				g.t.Fatalf("reqRequired: %v has no field %s", t, w)
			}
		}
	}
	o.set("properties", props)
	if len(required) > 0 {
		o.set("required", required)
	}
	return o.set("additionalProperties", false)
}

// schema is t's schema, a reference for a named struct.
func (g *docGen) schema(t reflect.Type, in bool) *obj {
	switch t {
	case timeType:
		return newObj("type", "string", "format", "date-time")
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
		(t.Implements(marshalerType) || t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshaler)) {
		g.t.Fatalf("%v marshals itself: give its schema by hand", t)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.schema(t.Elem(), in)
	case reflect.Struct:
		return g.ref(t, in)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			g.t.Fatalf("%v: map keys other than strings are not handled", t)
		}
		return newObj("type", "object", "additionalProperties", g.elem(t.Elem(), in))
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			g.t.Fatalf("%v: byte slices are not handled", t)
		}
		return newObj("type", "array", "items", g.elem(t.Elem(), in))
	case reflect.String:
		s := str()
		if t.PkgPath() != "" {
			g.loadDocs(t.PkgPath())
			if e := g.enums[qualified(t)]; len(e) > 0 {
				s.set("enum", e)
			}
		}
		return s
	case reflect.Bool:
		return newObj("type", "boolean")
	case reflect.Int, reflect.Int64:
		return newObj("type", "integer", "format", "int64")
	case reflect.Int32:
		return newObj("type", "integer", "format", "int32")
	case reflect.Int8, reflect.Int16:
		return newObj("type", "integer")
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return newObj("type", "integer", "minimum", 0)
	case reflect.Float64:
		return newObj("type", "number", "format", "double")
	case reflect.Float32:
		return newObj("type", "number", "format", "float")
	case reflect.Interface:
		return newObj("description", "Any JSON value.", "nullable", true)
	}
	g.t.Fatalf("%v: kind %v is not handled", t, t.Kind())
	return nil
}

// elem is the schema of a slice's or map's elements: null where
// encoding/json writes a nil element so.
func (g *docGen) elem(t reflect.Type, in bool) *obj {
	s := g.schema(t, in)
	if !in && nilable(t) && t.Kind() != reflect.Interface {
		s = nullable(s)
	}
	return s
}

func nilable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return t != rawMessageType
	}
	return false
}

// nullable lets s be null; a reference is wrapped, as OpenAPI 3.0
// ignores the siblings of $ref.
func nullable(s *obj) *obj {
	if _, ok := s.get("$ref"); ok {
		return newObj("nullable", true, "allOf", []any{s})
	}
	return s.set("nullable", true)
}

func describe(s *obj, d string) *obj {
	if _, ok := s.get("$ref"); ok {
		s = newObj("allOf", []any{s})
	}
	return newObj("description", d).merge(s)
}

// loadDocs reads the doc comments and string constants of the package at
// import path pkg, from its source under the module root.
func (g *docGen) loadDocs(pkg string) {
	if g.read[pkg] {
		return
	}
	g.read[pkg] = true
	rel, ok := strings.CutPrefix(pkg, quasimModule+"/")
	if !ok {
		g.t.Fatalf("package %s is not this module's", pkg)
	}
	name := path.Base(pkg)
	text := func(cgs ...*ast.CommentGroup) string {
		var parts []string
		for _, cg := range cgs {
			if cg != nil {
				parts = append(parts, strings.Fields(cg.Text())...)
			}
		}
		return strings.Join(parts, " ")
	}
	for _, f := range parseDir(g.t, filepath.Join("..", filepath.FromSlash(rel))) {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, sp := range gd.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					doc := sp.Doc
					if doc == nil && len(gd.Specs) == 1 {
						doc = gd.Doc
					}
					g.docs[name+"."+sp.Name.Name] = text(doc)
					st, ok := sp.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fl := range st.Fields.List {
						for _, n := range fl.Names {
							g.docs[name+"."+sp.Name.Name+"."+n.Name] = text(fl.Doc, fl.Comment)
						}
					}
				case *ast.ValueSpec:
					id, ok := sp.Type.(*ast.Ident)
					if gd.Tok != token.CONST || !ok {
						continue
					}
					for _, v := range sp.Values {
						if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, _ := strconv.Unquote(lit.Value)
							g.enums[name+"."+id.Name] = append(g.enums[name+"."+id.Name], s)
						}
					}
				}
			}
		}
	}
}

// obj is a JSON object that keeps its keys in the order they are set, so
// the document reads in route and field order.
type obj struct{ kv []kv }

type kv struct {
	k string
	v any
}

// newObj makes an object of keys and values, alternating.
func newObj(kvs ...any) *obj {
	o := &obj{}
	for i := 0; i < len(kvs); i += 2 {
		o.set(kvs[i].(string), kvs[i+1])
	}
	return o
}

// set sets k to v, in k's place if it has one, else last.
func (o *obj) set(k string, v any) *obj {
	for i := range o.kv {
		if o.kv[i].k == k {
			o.kv[i].v = v
			return o
		}
	}
	o.kv = append(o.kv, kv{k, v})
	return o
}

func (o *obj) get(k string) (any, bool) {
	for _, e := range o.kv {
		if e.k == k {
			return e.v, true
		}
	}
	return nil, false
}

// merge sets p's keys on o.
func (o *obj) merge(p *obj) *obj {
	for _, e := range p.kv {
		o.set(e.k, e.v)
	}
	return o
}

func (o *obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o.kv {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalPlain(e.k)
		if err != nil {
			return nil, err
		}
		v, err := marshalPlain(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalPlain is json.Marshal without escaping <, > and &, which the
// descriptions quote.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// TestOpenAPIDocument: the committed document is the one the routes,
// their documentation and the wire types give; -update rewrites it.
func TestOpenAPIDocument(t *testing.T) {
	got := openAPIDocument(t)
	if *updateOpenAPI {
		if err := os.WriteFile(openAPIPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(openAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what the routes and wire types give; run go test ./daemon -run TestOpenAPIDocument -update and commit it", openAPIPath)
	}
	if !bytes.Equal(api.OpenAPI, want) {
		t.Errorf("api.OpenAPI is not %s", openAPIPath)
	}
}
