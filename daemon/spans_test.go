package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/internal/store"
)

// pipelineDir is a spec dir declaring pipeline fj (so the builtin kernels
// load, there being no kernel spec) with the given extra lines.
func pipelineDir(t *testing.T, extra string) string {
	t.Helper()
	return pipelineDirIn(t, t.TempDir(), extra)
}

func pipelineDirB(b *testing.B) string { return pipelineDirIn(b, b.TempDir(), "") }

func pipelineDirIn(t testing.TB, dir, extra string) string {
	t.Helper()
	src := "pipeline: fj\nkernels: [sgemm, conv2d, reduce]\n" + extra
	if err := os.WriteFile(filepath.Join(dir, "fj.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// forkJoin is one iteration of pipeline fj from id on at time t0 (ns):
// conv2d (100) then sgemm (b) on stream 1; reduce (100) on stream 2 after
// conv2d; conv2d (50) on stream 1 after sgemm and reduce. sgemm runs at
// problem 128,128,128 and is on the critical path when b > 110.
func forkJoin(it int, id uint64, t0, b int64) []causal.Span {
	mk := func(n uint64, kernel, stream, problem string, start, end int64, deps ...uint64) causal.Span {
		return causal.Span{ID: id + n, Pipeline: "fj", Iteration: it, Kernel: kernel, Problem: problem, Device: "cpu", Stream: stream,
			Start: t0 + start, End: t0 + end, Deps: deps}
	}
	return []causal.Span{
		mk(1, "conv2d", "1", "", 0, 100),
		mk(2, "sgemm", "1", "128,128,128", 100, 100+b),
		mk(3, "reduce", "2", "", 110, 210, id+1),
		mk(4, "conv2d", "1", "", 100+b, 150+b, id+3),
	}
}

func (ts *testServer) post(t testing.TB, path string, body io.Reader, contentLength int64) (int, api.Error, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://quasimd"+path, body)
	req.ContentLength = contentLength
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var e api.Error
	json.Unmarshal(data, &e)
	return resp.StatusCode, e, data
}

func (ts *testServer) postSpans(t testing.TB, spans []causal.Span) (int, api.Error, []byte) {
	t.Helper()
	b, err := json.Marshal(spans)
	if err != nil {
		t.Fatal(err)
	}
	return ts.post(t, "/v1/spans", strings.NewReader(string(b)), int64(len(b)))
}

func TestSpansAndCausal(t *testing.T) {
	ts := newTestServer(t, pipelineDir(t, ""))
	// Four iterations with sgemm at 300, 200, 400, 300 ns; iteration 1
	// comes in two batches.
	bs := []int64{300, 200, 400, 300}
	var t0 int64
	var batches [][]causal.Span
	for it, b := range bs {
		batches = append(batches, forkJoin(it, 0, t0, b))
		t0 += 1000
	}
	batches = append(batches[:1], append([][]causal.Span{batches[1][:2], batches[1][2:]}, batches[2:]...)...)
	for n, b := range batches {
		// A batch's deps name its own spans only.
		for i := range b {
			var deps []uint64
			for _, d := range b[i].Deps {
				for _, o := range b {
					if o.ID == d {
						deps = append(deps, d)
					}
				}
			}
			b[i].Deps = deps
		}
		status, e, body := ts.postSpans(t, b)
		var r api.SpansResponse
		json.Unmarshal(body, &r)
		if status != 200 || r.Pipeline != "fj" || r.Stored != len(b) || r.Batch != uint64(n+1) {
			t.Fatalf("POST batch %d = %d %+v %s", n, status, e, body)
		}
	}
	// sgemm's job: the default config at 2 ms, another config at 1 ms.
	k, _ := ts.sched.kernel("sgemm")
	var j *job
	for _, jj := range k.jobs {
		if jj.key.Problem == "128,128,128" {
			j = jj
		}
	}
	dk := defaultKey(j)
	other := ""
	for _, c := range j.spec.Space.All() {
		if key := j.spec.Space.Key(c); key != dk {
			other = key
			break
		}
	}
	if _, err := ts.st.AddTrials(j.key, []store.Trial{{Key: dk, Status: "ok", TimeMS: 2, At: time.Now()}, {Key: other, Status: "ok", TimeMS: 1, At: time.Now()}}); err != nil {
		t.Fatal(err)
	}

	status, body := ts.get(t, "/v1/causal/fj", nil)
	if status != 200 {
		t.Fatalf("GET /v1/causal/fj = %d %s", status, body)
	}
	var c api.Causal
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	if c.Pipeline != "fj" || c.Batches != 5 || c.Iterations != 4 || c.Spans != 16 || len(c.Skipped) != 0 || c.CurveStep != causal.CurveStep {
		t.Fatalf("causal = %+v", c)
	}
	if len(c.Kernels) != 3 || c.Kernels[0].Kernel != "sgemm" {
		t.Fatalf("kernels %+v, want sgemm first (highest influence)", c.Kernels)
	}
	byName := map[string]api.CausalKernel{}
	for _, k := range c.Kernels {
		byName[k.Kernel] = k
	}
	// End to end 150 + b: 450, 350, 550, 450.
	if e := c.EndToEnd; e.N != 4 || e.Min != 350 || e.Max != 550 || e.Median != 450 {
		t.Errorf("end to end %+v", e)
	}
	sg := byName["sgemm"]
	// sgemm is on the critical path throughout: influence = share = b/(150+b).
	if want := 300.0 / 450; math.Abs(sg.Influence.Median-want) > 1e-9 || math.Abs(sg.Critical.Median-want) > 1e-9 || sg.Influence.N != 4 {
		t.Errorf("sgemm influence %+v critical %+v, want median %v", sg.Influence, sg.Critical, want)
	}
	if len(sg.Curve) != causal.CurveSteps || sg.Curve[0].Max != 0 {
		t.Errorf("sgemm curve %+v", sg.Curve)
	}
	// At its tuned time (half) every iteration saves b/2 of 150+b.
	if sg.Tuned == nil || len(sg.Tuned.Problems) != 1 || sg.Tuned.Problems[0].Scale != 0.5 || sg.Gain == nil ||
		math.Abs(sg.Gain.Median-150.0/450) > 1e-9 || sg.Gain.Lo > sg.Gain.Median || sg.Gain.Hi < sg.Gain.Median {
		t.Errorf("sgemm tuned %+v gain %+v", sg.Tuned, sg.Gain)
	}
	if sg.Measured != nil {
		t.Errorf("measured check %+v before any experiment", sg.Measured)
	}
	rd := byName["reduce"]
	if rd.Influence.Max != 0 || rd.Critical.Max != 0 {
		t.Errorf("reduce is off the critical path: influence %+v critical %+v", rd.Influence, rd.Critical)
	}
	if rd.Gain != nil || rd.Tuned != nil || rd.TunedNote != `no job of kernel reduce at problem ""` {
		t.Errorf("reduce gain %+v note %q, want unknown: its spans give no problem and it has several jobs", rd.Gain, rd.TunedNote)
	}
	// The same spans give the same answer (seeded bootstrap).
	if _, again := ts.get(t, "/v1/causal/fj", nil); string(again) != string(body) {
		t.Error("two GETs of the same spans differ")
	}
	if status, body := ts.get(t, "/v1/causal/nope", nil); status != 404 || !strings.Contains(string(body), `pipeline \"nope\" is not declared`) {
		t.Errorf("GET unknown pipeline = %d %s", status, body)
	}
}

// TestCausalRuns: a runtime that restarts counts iterations from 0 again
// on another clock; its iterations are kept apart from the first run's,
// and one that cannot build a graph is skipped, saying why.
func TestCausalRuns(t *testing.T) {
	ts := newTestServer(t, pipelineDir(t, ""))
	for _, b := range [][]causal.Span{
		append(forkJoin(0, 0, 0, 300), forkJoin(1, 10, 1000, 300)...),
		append(forkJoin(0, 0, 500, 300), forkJoin(1, 10, 1500, 300)...), // restarted: overlaps the first run in time
	} {
		if status, e, _ := ts.postSpans(t, b); status != 200 {
			t.Fatalf("POST = %d %+v", status, e)
		}
	}
	// One batch whose iteration 5 overlaps itself is refused whole, so
	// no stored iteration is bad; the analysis still has four.
	_, body := ts.get(t, "/v1/causal/fj", nil)
	var c api.Causal
	json.Unmarshal(body, &c)
	if c.Iterations != 4 || len(c.Skipped) != 0 {
		t.Errorf("causal of two runs = %d iterations, skipped %v, want 4 and none", c.Iterations, c.Skipped)
	}
	// Iterations numbered on across batches from two processes merge into
	// one iteration that does not build: it is skipped, named.
	late := forkJoin(7, 0, 0, 300)
	more := forkJoin(7, 0, 50, 300)
	for _, b := range [][]causal.Span{late, more} {
		if status, e, _ := ts.postSpans(t, b); status != 200 {
			t.Fatalf("POST = %d %+v", status, e)
		}
	}
	_, body = ts.get(t, "/v1/causal/fj", nil)
	c = api.Causal{}
	json.Unmarshal(body, &c)
	if c.Iterations != 4 || len(c.Skipped) != 1 || !strings.Contains(c.Skipped[0], "iteration 7 of run 1") || !strings.Contains(c.Skipped[0], "overlaps") {
		t.Errorf("causal = %d iterations, skipped %q", c.Iterations, c.Skipped)
	}
}

// TestSpansBadInput: each bad request gets a 4xx naming the problem, the
// daemon keeps serving and no stored span is lost.
func TestSpansBadInput(t *testing.T) {
	ts := newTestServer(t, pipelineDir(t, "retention: {spans: 10, batches: 2}\n"))
	good := forkJoin(0, 0, 0, 300)
	if status, e, _ := ts.postSpans(t, good); status != 200 {
		t.Fatalf("POST good batch = %d %+v", status, e)
	}
	endBefore := forkJoin(0, 0, 0, 300)
	endBefore[1].End = endBefore[1].Start - 1
	cycle := forkJoin(0, 0, 0, 300)
	cycle[0].Deps = []uint64{4} // conv2d #1 waits for conv2d #4, which comes after it on stream 1
	unknown := forkJoin(0, 0, 0, 300)
	for i := range unknown {
		unknown[i].Pipeline = "nope"
	}
	tooMany := append(forkJoin(0, 0, 0, 300), forkJoin(1, 10, 1000, 300)...)
	marshal := func(s []causal.Span) string { b, _ := json.Marshal(s); return string(b) }
	tests := []struct {
		name   string
		body   string
		status int
		code   api.Code
		want   string
	}{
		{"malformed", `[{"id": 1,`, 400, api.CodeInvalidArgument, "spans: decode spans: unexpected EOF"},
		{"not an array", `{"id": 1}`, 400, api.CodeInvalidArgument, "decode spans: json: cannot unmarshal object"},
		{"unknown field", `[{"id": 1, "pipeline": "fj", "kernel": "k", "start_ns": 0, "end_ns": 1, "color": "red"}]`, 400, api.CodeInvalidArgument, `unknown field "color"`},
		{"end before start", marshal(endBefore), 400, api.CodeInvalidArgument, "span 1: end_ns: ends before it starts (start 100, end 99)"},
		{"cycle", marshal(cycle), 400, api.CodeInvalidArgument, "span 0: deps: dependency cycle through spans 0 (id 1)"},
		{"unknown pipeline", marshal(unknown), 404, api.CodeNotFound, `pipeline "nope" is not declared`},
		{"empty", `[]`, 400, api.CodeInvalidArgument, "spans: invalid span: no spans"},
		{"over retention", marshal(tooMany), 400, api.CodeInvalidArgument, `8 spans in one batch, more than pipeline "fj" keeps (retention.spans 10`},
	}
	tooMany = append(tooMany, forkJoin(2, 20, 2000, 300)...)
	tests[len(tests)-1].body = marshal(tooMany)
	tests[len(tests)-1].want = `12 spans in one batch, more than pipeline "fj" keeps (retention.spans 10`
	for _, tt := range tests {
		status, e, body := ts.post(t, "/v1/spans", strings.NewReader(tt.body), int64(len(tt.body)))
		if status != tt.status || e.Code != tt.code || !strings.Contains(e.Error, tt.want) {
			t.Errorf("%s: POST = %d %s, want %d %s containing %q", tt.name, status, body, tt.status, tt.code, tt.want)
		}
	}

	// 100 MB, declared: refused before it is read.
	start := time.Now()
	status, e, _ := ts.post(t, "/v1/spans", io.LimitReader(zeros{}, 100<<20), 100<<20)
	if status != 413 || e.Code != api.CodeInvalidArgument || !strings.Contains(e.Error, "body of 104857600 bytes") {
		t.Errorf("100 MB body = %d %+v, want 413", status, e)
	}
	t.Logf("100 MB body with Content-Length refused in %v", time.Since(start))
	// 100 MB, chunked (no length): refused once the bound is read.
	status, e, _ = ts.post(t, "/v1/spans", io.LimitReader(zeros{}, 100<<20), -1)
	if status != 413 || e.Code != api.CodeInvalidArgument || !strings.Contains(e.Error, fmt.Sprintf("body larger than %d bytes", api.MaxBodyBytes)) {
		t.Errorf("100 MB chunked body = %d %+v, want 413", status, e)
	}

	// Still up, and the good batch is all there.
	if status, body := ts.get(t, "/v1/status", nil); status != 200 {
		t.Fatalf("status after bad input = %d %s", status, body)
	}
	stored, err := ts.st.SpanBatches("fj")
	if err != nil || len(stored) != 1 || stored[0].Count != 4 {
		t.Fatalf("stored after bad input: %+v, %v", stored, err)
	}
	var back []causal.Span
	if err := json.Unmarshal(stored[0].Spans, &back); err != nil || fmt.Sprint(back) != fmt.Sprint(good) {
		t.Errorf("stored spans %v, want %v", back, good)
	}

	// Retention: batches: 2 keeps the newest two.
	for i := 1; i <= 3; i++ {
		status, _, body := ts.postSpans(t, forkJoin(i, 0, int64(i)*1000, 300))
		var r api.SpansResponse
		json.Unmarshal(body, &r)
		if status != 200 || (i >= 2 && (r.DroppedBatches != 1 || r.DroppedSpans != 4)) {
			t.Errorf("batch %d: %d %s", i, status, body)
		}
	}
	if stored, _ := ts.st.SpanBatches("fj"); len(stored) != 2 || stored[0].Seq != 3 || stored[1].Seq != 4 {
		t.Errorf("after 4 batches with batches: 2, kept %+v", stored)
	}
}

// zeros reads as an endless run of '0'.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// TestSpansRateLimited: spans spend the poster's observation tokens.
func TestSpansRateLimited(t *testing.T) {
	ts := newTestServer(t, pipelineDir(t, ""))
	now := time.Unix(1000, 0)
	ts.api.Observers = sockapi.NewLimiter(1, 2, func() time.Time { return now })
	for i := range 2 {
		if status, e, _ := ts.postSpans(t, forkJoin(i, 0, int64(i)*1000, 300)); status != 200 {
			t.Fatalf("POST %d = %d %+v", i, status, e)
		}
	}
	if status, e, _ := ts.postSpans(t, forkJoin(2, 0, 2000, 300)); status != 429 || e.Code != api.CodeRateLimited {
		t.Errorf("third POST with a bucket of 2 = %d %+v, want 429", status, e)
	}
	now = now.Add(time.Second)
	if status, e, _ := ts.postSpans(t, forkJoin(2, 0, 2000, 300)); status != 200 {
		t.Errorf("after a refill = %d %+v", status, e)
	}
	// A batch of 2,000 spans costs 1 + 2 tokens: a full bucket of 3.
	ts.api.Observers = sockapi.NewLimiter(1, 3, func() time.Time { return now })
	var big []causal.Span
	for it := range 500 {
		big = append(big, forkJoin(it, uint64(it)*10, int64(it)*1000, 300)...)
	}
	if status, e, _ := ts.postSpans(t, big); status != 200 {
		t.Fatalf("POST of %d spans = %d %+v", len(big), status, e)
	}
	if status, e, _ := ts.postSpans(t, forkJoin(600, 0, 600_000, 300)); status != 429 {
		t.Errorf("POST after a 2,000-span batch emptied the bucket = %d %+v, want 429", status, e)
	}
}

// TestPipelinesInStatus: status lists the declared pipelines; one naming a
// kernel that is not loaded loads, with the file and field in the spec
// errors; a bad pipeline file is a spec error and declares nothing.
func TestPipelinesInStatus(t *testing.T) {
	dir := pipelineDir(t, "budget_by_influence: false\n")
	if err := os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("pipeline: other\nkernels: [sgemm, nosuch]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(`{"pipeline": "bad", "retention": {"spans": 0}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, dir)
	_, body := ts.get(t, "/v1/status", nil)
	var st api.Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Pipelines) != 2 || st.Pipelines[0].Name != "fj" || st.Pipelines[0].BudgetByInfluence || st.Pipelines[1].Name != "other" ||
		st.Pipelines[0].RetainSpans != 100000 || st.Pipelines[0].Source != filepath.Join(dir, "fj.yaml") {
		t.Errorf("pipelines %+v", st.Pipelines)
	}
	if st.Kernels != 3 {
		t.Errorf("%d kernels, want the 3 builtins (pipeline files are no kernel specs)", st.Kernels)
	}
	errs := strings.Join(st.SpecError, "\n")
	if !strings.Contains(errs, filepath.Join(dir, "b.yaml")+`: kernels[1]: "nosuch" is not a loaded kernel spec`) ||
		!strings.Contains(errs, filepath.Join(dir, "c.json")+": retention.spans: 0 out of range") || len(st.SpecError) != 2 {
		t.Errorf("spec errors %q", st.SpecError)
	}
}
