package daemon

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
)

// execPipelineServer serves a spec dir whose one kernel is evaluate/harness's
// fake harness, declaring a pipeline answered as form says.
func execPipelineServer(t *testing.T, form string) *testServer {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "fakeharness")
	if out, err := exec.Command("go", "build", "-o", bin, "../evaluate/harness/testdata/fakeharness").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	t.Setenv("FAKE_PIPELINE", form) // the harness inherits quasimd's environment
	t.Setenv("FAKE_MODES", "ok")
	kd := filepath.Join(dir, "kernels.d")
	spec := "name: fake\nevaluator: exec:" + bin + "\nproblems: [\"64\"]\nschedule: \"@every 1h\"\n"
	if err := os.MkdirAll(kd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kd, "fake.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return newTestServer(t, kd)
}

// A pipeline an exec harness declares is declared to the daemon and runs
// its experiment through the builtin one's route; the fake harness's
// times are exact, so every prediction is the measurement.
func TestExecPipelineExperiment(t *testing.T) {
	ts := execPipelineServer(t, "spans")
	code, body := ts.get(t, "/v1/status", nil)
	if code != 200 || !strings.Contains(string(body), `"fakepipe"`) {
		t.Fatalf("status: %d %s", code, body)
	}
	code, body = ts.postBody(t, "/v1/causal/fakepipe/experiment", `{"runs":2}`)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var ex api.Experiment
	if err := json.Unmarshal(body, &ex); err != nil {
		t.Fatal(err)
	}
	if ex.ID != 1 || ex.Pipeline != "fakepipe" || len(ex.Results) != 6 || len(ex.Stages) != 3 || ex.Stages[1].Kernel != "side" {
		t.Fatalf("experiment %s", body)
	}
	for _, r := range ex.Results {
		if r.Error > 1e-9 || r.Measured.N != 2 {
			t.Errorf("%s: predicted %v, measured %v", r.Perturbation.Name, r.Predicted.Median, r.Measured.Median)
		}
		if r.Perturbation.Stage == "b" && math.Abs(r.Predicted.Median) > 1e-9 {
			t.Errorf("%s, beside the critical path: predicted %v", r.Perturbation.Name, r.Predicted.Median)
		}
	}
	code, body = ts.get(t, "/v1/causal/fakepipe", nil)
	var prof api.Causal
	if err := json.Unmarshal(body, &prof); code != 200 || err != nil || prof.Iterations != 12 {
		t.Fatalf("causal: %d %s", code, body)
	}
	for _, c := range []struct{ body, want string }{
		{`{"perturbations":[{"stage":"z","delay_ms":1}]}`, `stage \"z\"`},
		{`{"perturbations":[{"stage":"b","config":"7"}]}`, `stage \"b\"`},
	} {
		if code, body := ts.postBody(t, "/v1/causal/fakepipe/experiment", c.body); code != 400 || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %s, want 400 naming %s", c.body, code, body, c.want)
		}
	}
}

// A harness that answers an iteration out of order fails the experiment
// with an error naming the stages; nothing is stored.
func TestExecPipelineBadAnswer(t *testing.T) {
	ts := execPipelineServer(t, "late")
	code, body := ts.postBody(t, "/v1/causal/fakepipe/experiment", `{"runs":2}`)
	if code < 500 || !strings.Contains(string(body), `stage \"c\" starts at`) {
		t.Fatalf("%d %s", code, body)
	}
	if code, body := ts.get(t, "/v1/causal/fakepipe/experiments", nil); code != 404 {
		t.Fatalf("experiments: %d %s", code, body)
	}
	if code, _ := ts.get(t, "/v1/status", nil); code != 200 {
		t.Fatalf("status after: %d", code)
	}
}
