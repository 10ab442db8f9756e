package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
)

// A FAIR T1 kernel whose default violates its constraints: the daemon
// serves the nearest valid config and says so in /v1/kernels; a float
// parameter comes back a float (2.0), not the integer 2.
func TestT1DefaultAndFloats(t *testing.T) {
	dir := t.TempDir()
	t1 := `{"General": {"BenchmarkName": "tiny"}, "ConfigurationSpace": {"TuningParameters": [
		{"Name": "bx", "Type": "int", "Values": "[16, 32, 64]", "Default": 64},
		{"Name": "f", "Type": "float", "Values": "[1.0, 2.0, 2.5]", "Default": 2.0}],
		"Conditions": [{"Expression": "bx * f <= 100", "Parameters": ["bx", "f"]}]},
		"KernelSpecification": {"ProblemSize": [1024]}}`
	if err := os.WriteFile(filepath.Join(dir, "tiny.T1.json"), []byte(t1), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, dir)
	code, body := ts.get(t, "/v1/configs/tiny", nil)
	if code != 200 {
		t.Fatalf("GET /v1/configs/tiny = %d %s", code, body)
	}
	if !strings.Contains(string(body), `"f":2.0`) {
		t.Errorf("config answer %s: want the float f as 2.0", body)
	}
	var c api.Config
	if err := json.Unmarshal(body, &c); err != nil || c.Key != "32,2.0" || c.Match != api.MatchDefault {
		t.Errorf("config answer %+v (%v), want the default replaced by the nearest valid 32,2.0", c, err)
	}
	code, body = ts.get(t, "/v1/kernels", nil)
	var ks []api.Kernel
	if err := json.Unmarshal(body, &ks); code != 200 || err != nil || len(ks) != 1 {
		t.Fatalf("GET /v1/kernels = %d %s", code, body)
	}
	if n := ks[0].Notes; len(n) != 1 || !strings.Contains(n[0], "the default 64,2.0 is not a valid config") || !strings.Contains(n[0], "32,2.0") {
		t.Errorf("kernel notes %q, want one saying the default 64,2.0 was replaced by 32,2.0", n)
	}
}
