package harness

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func startPipeline(t *testing.T, form string) *Harness {
	t.Helper()
	h, err := Start(Options{Command: []string{fakeBin}, Env: []string{"FAKE_PIPELINE=" + form}, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// A harness that declares a pipeline answers pipeline requests with spans
// or stage times; both come back checked, spans in declaration order.
func TestRunPipeline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := startPipeline(t, "spans")
	d := h.Pipeline()
	if d == nil || d.Name != "fakepipe" || len(d.Stages) != 3 || h.StageKernel(1) != "side" || h.StageKernel(0) != "fake" {
		t.Fatalf("declared %+v", d)
	}
	sp, err := h.StageSpace(1)
	if err != nil || len(sp.Params()) != 1 {
		t.Fatalf("stage b's space: %v", err)
	}
	if sp, err := h.StageSpace(0); err != nil || len(sp.Params()) != 2 {
		t.Fatalf("stage a's space: %v", err)
	}
	res, err := h.RunPipeline(ctx, 0, map[string]map[string]any{"a": {"mode": "ok", "n": 3}, "b": {"w": 2}}, map[string]int64{"b": 1e6})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Spans) != 3 || res.Spans[0].Stage != "a" || res.Spans[0].EndNS-res.Spans[0].StartNS != 3e6 || res.Spans[0].StartNS != 105e6 ||
		res.Spans[1].DelayedNS != 1e6 || res.Spans[2].StartNS != res.Spans[0].EndNS {
		t.Fatalf("spans %+v", res.Spans)
	}

	h = startPipeline(t, "times")
	res, err = h.RunPipeline(ctx, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.EndToEndNS != 2.5e6 || res.StageNS["c"] != 0.5e6 || res.Spans != nil {
		t.Fatalf("times %+v", res)
	}

	// A stage that starts before its join ends is refused, naming both;
	// the harness stays usable.
	h = startPipeline(t, "late")
	if _, err := h.RunPipeline(ctx, 0, nil, nil); err == nil || !strings.Contains(err.Error(), `stage "c" starts at`) || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("late join: %v", err)
	}
	if _, err := h.RunPipeline(ctx, 1, nil, nil); err == nil || !strings.Contains(err.Error(), "starts at") {
		t.Fatalf("second request: %v", err)
	}

	// A harness without a pipeline says so.
	if _, err := start(t).RunPipeline(ctx, 0, nil, nil); err == nil || !strings.Contains(err.Error(), "declares no pipeline") {
		t.Fatalf("no pipeline: %v", err)
	}
}

// Bad declarations are refused at the hello, naming the field.
func TestCheckPipeline(t *testing.T) {
	ok := `{"name":"p","stages":[{"name":"a","problem":[4],"stream":"x"},{"name":"b","kernel":"k","problem":[2],"stream":"y","params":[{"name":"w","values":[1,2]}]},{"name":"c","problem":[1],"stream":"x","after":["b"]}]}`
	for _, c := range []struct{ edit, want string }{
		{`"name":"p"`, ""},
		{`"name":"p"` + "|" + `"name":"p q"`, `pipeline.name "p q"`},
		{`"problem":[4]|"problem":[]`, "pipeline.stages[0] (a).problem: none"},
		{`"problem":[4]|"problem":[0]`, "pipeline.stages[0] (a).problem[0]: 0"},
		{`"stream":"y"|"stream":""`, "pipeline.stages[1] (b).stream: none"},
		{`"name":"b"|"name":"a"`, `pipeline.stages[1].name "a" used twice`},
		{`"after":["b"]|"after":["z"]`, `pipeline.stages[2] (c).after[0] "z": no earlier stage`},
		{`"after":["b"]|"after":["a"]`, `after[0] "a": same stream`},
		{`"kernel":"k",|`, "pipeline.stages[1] (b).params: a stage of the harness's own kernel"},
		{`"values":[1,2]|"values":[]`, "pipeline.stages[1] (b).params[0] (w): no values"},
	} {
		decl := ok
		if from, to, found := strings.Cut(c.edit, "|"); found {
			decl = strings.Replace(ok, from, to, 1)
		}
		var m Hello
		hello := `{"type":"hello","protocol":1,"name":"h","params":[{"name":"t","values":[1]}],"pipeline":` + decl + `}`
		if err := json.Unmarshal([]byte(hello), &m); err != nil {
			t.Fatal(err)
		}
		err := checkHello(m)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: got %v, want %q", c.edit, err, c.want)
		}
	}
}

// Bad answers are refused naming the field.
func TestParsePipelineResult(t *testing.T) {
	d := &PipelineDecl{Name: "p", Stages: []StageDecl{
		{Name: "a", Problem: []int{1}, Stream: "x"},
		{Name: "b", Problem: []int{1}, Stream: "y"},
		{Name: "c", Problem: []int{1}, Stream: "x", After: []string{"b"}},
	}}
	delays := map[string]int64{"b": 100}
	ok := `{"type":"pipeline_result","id":3,"spans":[{"stage":"a","start_ns":0,"end_ns":50},{"stage":"b","start_ns":0,"end_ns":150,"delayed_ns":100,"stream":"y"},{"stage":"c","start_ns":150,"end_ns":170,"after":["b"]}]}`
	times := `{"type":"pipeline_result","id":3,"end_to_end_ns":170,"stage_ns":{"a":50,"b":150,"c":20},"delayed_ns":{"b":100}}`
	for _, c := range []struct{ line, want string }{
		{ok, ""},
		{times, ""},
		{strings.Replace(ok, `"id":3`, `"id":4`, 1), "answer id 4"},
		{strings.Replace(ok, `"start_ns":150`, `"start_ns":149`, 1), `stage "c" starts at 149 ns, before "b"`},
		{strings.Replace(ok, `"stage":"a","start_ns":0,"end_ns":50`, `"stage":"a","start_ns":60,"end_ns":50`, 1), "spans[0] (a): start_ns 60, end_ns 50"},
		{strings.Replace(ok, `"stage":"a"`, `"stage":"c"`, 1), `spans[2].stage "c": given twice`},
		{strings.Replace(ok, `"stage":"a"`, `"stage":"z"`, 1), `spans[0].stage "z": no such stage`},
		{strings.Replace(ok, `"stream":"y"`, `"stream":"x"`, 1), `spans[1] (b).stream "x": declared "y"`},
		{strings.Replace(ok, `"after":["b"]`, `"after":["a"]`, 1), `spans[2] (c).after`},
		{strings.Replace(ok, `"delayed_ns":100`, `"delayed_ns":99`, 1), "spans[1].delayed_ns 99"},
		{strings.Replace(ok, `"end_ns":50}`, `"end_ns":50,"delayed_ns":5}`, 1), `stage "a" was not delayed`},
		{strings.Replace(ok, `"spans"`, `"spanz"`, 1), "unknown field"},
		{`{"type":"pipeline_result","id":3,"error":"out of memory"}`, "harness failed the iteration: out of memory"},
		{`{"type":"pipeline_result","id":3}`, "neither spans nor stage_ns"},
		{strings.Replace(times, `"c":20`, `"d":20`, 1), `stage_ns["d"]: no such stage`},
		{strings.Replace(times, `,"c":20`, ``, 1), `stage_ns["c"]: missing`},
		{strings.Replace(times, `"end_to_end_ns":170`, `"end_to_end_ns":0`, 1), "end_to_end_ns 0"},
		{strings.Replace(times, `"a":50`, `"a":-1`, 1), `stage_ns["a"] -1`},
		{strings.Replace(times, `{"b":100}`, `{"a":100}`, 1), `delayed_ns["a"] 100: stage "a" was not delayed`},
		{`{"type":"pipeline_result","id":3,"spans":[{"stage":"a","start_ns":0,"end_ns":50}],"end_to_end_ns":5}`, "want one form"},
		{`{"type":"pipeline_result","id":3,"spans":[{"stage":"a","start_ns":0,"end_ns":50}]}`, "spans: 1, want one per stage (3)"},
	} {
		res, err := parsePipelineResult([]byte(c.line), 3, d, delays)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: got %v, want %q", c.line, err, c.want)
		}
		if err == nil && res.Spans != nil && (res.Spans[0].Stage != "a" || res.Spans[2].Stage != "c") {
			t.Errorf("spans not in declaration order: %+v", res.Spans)
		}
	}
}
