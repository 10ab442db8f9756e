package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/pipeline"
)

// postBody posts body to path and returns the status and the answer.
func (ts *testServer) postBody(t testing.TB, path, body string) (int, []byte) {
	t.Helper()
	code, _, data := ts.post(t, path, strings.NewReader(body), int64(len(body)))
	return code, data
}

// The daemon runs the builtin pipeline at its jobs' served configs,
// stores the experiment and lists it; bad requests are refused whole,
// naming what is wrong, and store nothing.
func TestExperiment(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	_, served := ts.serve(t, "conv2d", "512,512,7")
	code, body := ts.postBody(t, "/v1/causal/builtin/experiment",
		`{"runs":2,"perturbations":[{"name":"sgemm+1ms","stage":"sgemm","delay_ms":1},{"stage":"conv_big","config":"256,16,1,False,8,fp32"}]}`)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var ex api.Experiment
	if err := json.Unmarshal(body, &ex); err != nil {
		t.Fatal(err)
	}
	if ex.ID != 1 || ex.Runs != 2 || len(ex.Results) != 2 || len(ex.Stages) != 4 || ex.Baseline.N != 4 || ex.Baseline.Median <= 0 {
		t.Fatalf("experiment %s", body)
	}
	if st := ex.Stages[0]; st.Name != "conv_big" || st.Config != served || !st.Served || ex.Stages[2].Served {
		t.Fatalf("stages %+v, served %q", ex.Stages, served)
	}
	r := ex.Results[0]
	if r.Perturbation.Name != "sgemm+1ms" || r.Kernel != "sgemm" || r.Problem != "128,128,128" || r.Measured.N != 2 || r.Perturbation.DelayMS != 1 {
		t.Fatalf("result %+v", r)
	}
	if ex.Results[1].Scale <= 0 || ex.Results[1].Perturbation.Name != "p1" {
		t.Fatalf("config result %+v", ex.Results[1])
	}

	// The builtin pipeline is declared (the builtin kernels are tuned), its
	// baseline spans are stored like posted ones, and the profile shows the
	// experiment's check of each kernel it perturbed.
	code, body = ts.get(t, "/v1/causal/builtin", nil)
	var prof api.Causal
	if err := json.Unmarshal(body, &prof); code != 200 || err != nil {
		t.Fatalf("causal: %d %s", code, body)
	}
	if prof.Batches != 1 || prof.Iterations != 4 || prof.Spans != 16 {
		t.Fatalf("profile of the experiment's spans: %d batches, %d iterations, %d spans", prof.Batches, prof.Iterations, prof.Spans)
	}
	checked := map[string]string{}
	for _, k := range prof.Kernels {
		if k.Measured != nil {
			checked[k.Kernel] = k.Measured.Experiment
			if k.Measured.Runs != 2 || k.Measured.Measured.N != 2 {
				t.Errorf("%s: check %+v", k.Kernel, k.Measured)
			}
		}
	}
	if checked["sgemm"] != "sgemm +1ms (experiment 1)" || checked["conv2d"] != "conv_big at 256,16,1,False,8,fp32 (experiment 1)" || len(checked) != 2 {
		t.Fatalf("measured checks %v", checked)
	}

	for _, c := range []struct {
		path, body string
		code       int
		want       string
	}{
		{"/v1/causal/other/experiment", `{}`, 404, `pipeline \"other\"`},
		{"/v1/causal/builtin/experiment", `{"runs":1}`, 400, "runs 1"},
		{"/v1/causal/builtin/experiment", `{"runs":2,`, 400, "body"},
		{"/v1/causal/builtin/experiment", `{"perturbations":[{"stage":"nope","delay_ms":1}]}`, 400, `stage \"nope\"`},
		{"/v1/causal/builtin/experiment", `{"perturbations":[{"stage":"sgemm","delay_ms":1,"config":"16,16,16,1,1,False,ijk,fp32"}]}`, 400, "one of them"},
		{"/v1/causal/builtin/experiment", `{"perturbations":[{"stage":"sgemm","config":"1,2"}]}`, 400, "config key"},
		{"/v1/causal/builtin/experiment", `{"perturbations":[{"stage":"sgemm","delay_ms":-1}]}`, 400, "delay_ms -1"},
		{"/v1/causal/builtin/experiment", `{"baseline":true,"perturbations":[{"stage":"sgemm","delay_ms":1}]}`, 400, "baseline"},
		{"/v1/causal/builtin/experiment", `{"baseline":true,"speedups":true}`, 400, "speedups"},
		{"/v1/causal/builtin/experiment", `{"perturbations":[{"stage":"sgemm","speedup":1.5}]}`, 400, "speedup"},
	} {
		code, body := ts.postBody(t, c.path, c.body)
		if code != c.code || !strings.Contains(string(body), c.want) {
			t.Errorf("%s %s: %d %s, want %d naming %q", c.path, c.body, code, body, c.code, c.want)
		}
	}

	code, body = ts.postBody(t, "/v1/causal/builtin/experiment", `{"runs":3,"baseline":true}`)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	code, body = ts.get(t, "/v1/causal/builtin/experiments", nil)
	var list api.Experiments
	if err := json.Unmarshal(body, &list); code != 200 || err != nil {
		t.Fatalf("%d %s", code, body)
	}
	if len(list.Experiments) != 2 || list.Experiments[0].ID != 2 || len(list.Experiments[0].Results) != 0 || list.Experiments[0].Baseline.N != 3 ||
		list.Experiments[1].ID != 1 || len(list.Experiments[1].Results) != 2 {
		t.Fatalf("list %s", body)
	}
	if code, _ := ts.get(t, "/v1/causal/other/experiments", nil); code != 404 {
		t.Fatalf("unknown pipeline: %d", code)
	}

	// Coz's virtual speedup of each stage, beside a delay of it.
	code, body = ts.postBody(t, "/v1/causal/builtin/experiment", `{"runs":2,"speedups":true}`)
	if err := json.Unmarshal(body, &ex); code != 200 || err != nil {
		t.Fatalf("speedups: %d %s", code, body)
	}
	sped := 0
	for _, r := range ex.Results {
		if r.Perturbation.Speedup > 0 {
			sped++
			if !(r.PausedMS > 0) || r.Perturbation.DelayMS != 0 {
				t.Errorf("speedup result %+v: want pauses inserted and no delay", r)
			}
		}
	}
	if want := len(pipeline.BuiltinSpeedups()); len(ex.Results) != want || sped != len(ex.Stages) {
		t.Fatalf("speedups: %d results, %d of them speedups, want %d with one a stage (%d stages)", len(ex.Results), sped, want, len(ex.Stages))
	}
}

// FuzzExperimentRequest: any body either is refused as invalid, naming
// what is wrong, or gives perturbations the runner accepts.
func FuzzExperimentRequest(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"runs":5,"baseline":true}`,
		`{"perturbations":[{"stage":"sgemm","delay_ms":1},{"stage":"conv_big","config":"256,16,1,False,8,fp32"}]}`,
		`{"perturbations":[{"stage":"sgemm","delay_ms":1e308}]}`, `{"perturbations":[{"stage":"reduce","config":"65536,8,1"}]}`,
	} {
		f.Add([]byte(seed))
	}
	rn, err := pipeline.New(pipeline.Config{Pipeline: pipeline.Builtin(), Clock: pipeline.Since(time.Now())})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var req api.ExperimentRequest
		if dec.Decode(&req) != nil {
			return
		}
		perts, err := experimentPlan(req, rn, pipeline.BuiltinPerturbations())
		if err != nil {
			if !errors.Is(err, api.ErrInvalidArgument) {
				t.Fatalf("%s: %v, want invalid argument", data, err)
			}
			return
		}
		if err := rn.Check(perts); err != nil {
			t.Fatalf("%s: planned perturbations fail: %v", data, err)
		}
		for _, p := range perts {
			if p.Delay < 0 || p.Delay > time.Second {
				t.Fatalf("%s: delay %s", data, p.Delay)
			}
		}
	})
}
