package daemon

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/quasim/quasim/api"
)

// Whatever a runtime posts to /v1/observations, the daemon answers with a
// client error or stores it: never a server error.
func FuzzObservations(f *testing.F) {
	ts := newTestServer(f, filepath.Join(f.TempDir(), "none"))
	_, key := ts.serve(f, "reduce", "4194304")
	good, _ := json.Marshal(api.ObservationsRequest{Observations: []api.Observation{{Kernel: "reduce", Problem: "4194304", Key: key, LatenciesMS: []float64{1.5, 2}}}})
	f.Add(good)
	f.Add([]byte(`{"observations":[{"kernel":"reduce","problem":"1,2","key":"x","latencies_ms":[1]}]}`))
	f.Add([]byte(`{"observations":[{"kernel":"nope","problem":"1","key":"x","latencies_ms":[-1]}]}`))
	f.Add([]byte(`{"observations":[]}`))
	withErr, _ := json.Marshal(api.ObservationsRequest{Observations: []api.Observation{{Kernel: "reduce", Problem: "4194304", Key: key, LatenciesMS: []float64{1}, Error: 0.5}}})
	f.Add(withErr)
	f.Add([]byte(`{"observations":[{"kernel":"reduce","problem":"4194304","key":"x","latencies_ms":[1],"error":-1e308}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, _ := http.NewRequest("POST", "http://quasimd/v1/observations", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := ts.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		switch resp.StatusCode {
		case http.StatusOK:
			var r api.ObservationsResponse
			if err := json.Unmarshal(out, &r); err != nil || r.Stored == 0 {
				t.Fatalf("200 with %q (%v) for %q", out, err, body)
			}
		case http.StatusBadRequest, http.StatusNotFound:
		default:
			t.Fatalf("status %d (%s) for %q", resp.StatusCode, out, body)
		}
	})
}
