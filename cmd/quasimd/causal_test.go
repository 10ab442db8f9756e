package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/client"
)

// TestCausalEndToEnd drives pipelines through the real binaries: declared
// in the spec dir, spans imported from a real PyTorch trace and posted by
// the Go client, the table shown by quasimctl; bad requests get a 4xx
// naming the problem and cost nothing stored.
func TestCausalEndToEnd(t *testing.T) {
	t.Parallel()
	dir := newDir(t, map[string]string{
		"sgemm.yaml": sgemmSpec,
		"fj.yaml":    "pipeline: fj\nkernels: [sgemm]\nretention: {spans: 1000, batches: 50}\n",
		"torch.json": `{"pipeline": "torch"}`,
	})
	d := start(t, dir)
	var st api.Status
	d.ctlJSON(&st, "status")
	if len(st.Pipelines) != 2 || st.Pipelines[0].Name != "fj" || st.Pipelines[1].Name != "torch" || st.Kernels != 1 || len(st.SpecError) != 0 {
		t.Fatalf("status: pipelines %+v, kernels %d, errors %q", st.Pipelines, st.Kernels, st.SpecError)
	}
	if out, _, _ := d.ctl("status"); !strings.Contains(out, "pipelines:    2\n  fj (") {
		t.Errorf("status does not list the pipelines:\n%s", out)
	}

	// A real trace, imported and posted.
	trace := filepath.Join("..", "..", "causal", "testdata", "torch_cpu_trace.json")
	out, errs, code := d.ctl("causal", "import", "--pipeline", "torch", trace)
	if code != 0 || !strings.Contains(out, "mapped 163 spans") || !strings.Contains(out, "posted 163 spans in 1 batch to pipeline torch\n") {
		t.Fatalf("causal import = %d\n%s%s", code, out, errs)
	}
	out, errs, code = d.ctl("causal", "show", "torch")
	if code != 0 || !strings.Contains(out, "pipeline torch: 5 iterations, 163 spans (1 batch); end to end 2.763ms") ||
		!strings.Contains(out, "forward              97.0% [97.0%, 97.0%]") || !strings.Contains(out, "  forward, aten::zeros, aten::cat, aten::t, ") {
		t.Errorf("causal show torch = %d\n%s%s", code, out, errs)
	}
	t.Logf("quasimctl causal show torch:\n%s", out)

	// The Go client posts a fork-join pipeline of sgemm (on the critical
	// path) and two kernels that are not specs.
	c := &client.Client{Socket: d.socket}
	ctx := context.Background()
	for it := range 6 {
		t0 := int64(it) * 10_000
		b := int64(3000 + 200*(it%3))
		spans := []causal.Span{
			{ID: 1, Pipeline: "fj", Iteration: it, Kernel: "prep", Stream: "1", Start: t0, End: t0 + 1000},
			{ID: 2, Pipeline: "fj", Iteration: it, Kernel: "sgemm", Problem: "128,128,128", Stream: "1", Start: t0 + 1000, End: t0 + 1000 + b},
			{ID: 3, Pipeline: "fj", Iteration: it, Kernel: "side", Stream: "2", Start: t0 + 1100, End: t0 + 2100, Deps: []uint64{1}},
			{ID: 4, Pipeline: "fj", Iteration: it, Kernel: "prep", Stream: "1", Start: t0 + 1000 + b, End: t0 + 1500 + b, Deps: []uint64{3}},
		}
		if r, err := c.PostSpans(ctx, spans); err != nil || r.Stored != 4 || r.Batch != uint64(it+1) {
			t.Fatalf("PostSpans %d = %+v, %v", it, r, err)
		}
	}
	// sgemm's tuned time comes from its job's trials: one cycle measures
	// the default first.
	if out, errs, code := d.ctl("tune", "sgemm", "--problem", "128,128,128", "--budget", "4", "--wait"); code != 0 {
		t.Fatalf("tune = %d %s %s", code, out, errs)
	}
	cz, err := c.Causal(ctx, "fj")
	if err != nil {
		t.Fatal(err)
	}
	if cz.Iterations != 6 || cz.Spans != 24 || len(cz.Kernels) != 3 || cz.Kernels[0].Kernel != "sgemm" {
		t.Fatalf("causal fj = %+v", cz)
	}
	sg := cz.Kernels[0]
	if sg.Tuned == nil || sg.Gain == nil || sg.Tuned.Problems[0].Scale <= 0 || sg.Tuned.Problems[0].Scale > 1 {
		t.Errorf("sgemm tuned %+v gain %+v note %q, want both known after a cycle", sg.Tuned, sg.Gain, sg.TunedNote)
	}
	if side := cz.Kernels[2]; side.Kernel != "side" || side.Influence.Max != 0 {
		t.Errorf("side (off the critical path) = %+v", side)
	}
	out, _, code = d.ctl("causal", "show", "fj", "--curves")
	if code != 0 || !strings.Contains(out, "GAIN IF TUNED") || !strings.Contains(out, "virtual-speedup curves") {
		t.Errorf("causal show fj --curves = %d\n%s", code, out)
	}
	t.Logf("quasimctl causal show fj --curves:\n%s", out)

	// Bad input over the socket.
	post := func(body io.Reader, length int64) (int, api.Error, time.Duration) {
		hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dd net.Dialer
			return dd.DialContext(ctx, "unix", d.socket)
		}}}
		req, _ := http.NewRequest("POST", "http://quasimd/v1/spans", body)
		req.ContentLength = length
		t0 := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("POST /v1/spans: %v", err)
		}
		defer resp.Body.Close()
		var e api.Error
		json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e, time.Since(t0)
	}
	bad := []struct {
		name, body string
		status     int
		want       string
	}{
		{"malformed JSON", `[{"id": 1, "pipeline": "fj",`, 400, "decode spans: unexpected EOF"},
		{"ends before it starts", `[{"id": 1, "pipeline": "fj", "kernel": "k", "start_ns": 10, "end_ns": 5}]`, 400, "span 0: end_ns: ends before it starts (start 10, end 5)"},
		{"cycle", `[{"id": 1, "pipeline": "fj", "kernel": "a", "stream": "1", "start_ns": 0, "end_ns": 5, "deps": [2]},
			{"id": 2, "pipeline": "fj", "kernel": "b", "stream": "2", "start_ns": 0, "end_ns": 5, "deps": [1]}]`, 400, "deps: dependency cycle through spans 0 (id 1) -> 1 (id 2) -> 0 (id 1)"},
		{"unknown pipeline", `[{"id": 1, "pipeline": "nope", "kernel": "k", "start_ns": 0, "end_ns": 5}]`, 404, `pipeline "nope" is not declared`},
	}
	for _, b := range bad {
		status, e, _ := post(strings.NewReader(b.body), int64(len(b.body)))
		if status != b.status || !strings.Contains(e.Error, b.want) {
			t.Errorf("%s: %d %+v, want %d and %q", b.name, status, e, b.status, b.want)
		}
	}
	status, e, took := post(io.LimitReader(zeros{}, 100<<20), 100<<20)
	if status != 413 || !strings.Contains(e.Error, "body of 104857600 bytes: at most 8388608 bytes a request") {
		t.Errorf("100 MB body: %d %+v", status, e)
	}
	t.Logf("100 MB body refused with %d in %v", status, took)
	status, e, took = post(io.LimitReader(zeros{}, 100<<20), -1)
	if status != 413 || !strings.Contains(e.Error, "body larger than 8388608 bytes") {
		t.Errorf("100 MB chunked body: %d %+v", status, e)
	}
	t.Logf("100 MB chunked body refused with %d in %v", status, took)

	// Still up, nothing lost.
	if after, err := c.Causal(ctx, "fj"); err != nil || after.Spans != 24 || after.Batches != 6 {
		t.Errorf("fj after bad input = %+v, %v", after, err)
	}
	if after, err := c.Causal(ctx, "torch"); err != nil || after.Spans != 163 {
		t.Errorf("torch after bad input = %+v, %v", after, err)
	}
	d.stop()
}

// zeros reads as an endless run of '0'.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}
