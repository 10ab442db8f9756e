package daemon

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quasim/quasim/internal/memplan"
	"github.com/quasim/quasim/memgraph/onnx"
)

// BenchmarkMemgraphPlan measures POST /v1/memgraph/plan over the real
// socket beside the same plan made in process (memplan.Plan on the
// decoded graph), in the same run: the difference is what the socket,
// the JSON both ways and the checks cost.
//
//	go test ./daemon -run '^$' -bench MemgraphPlan -benchmem
func BenchmarkMemgraphPlan(b *testing.B) {
	ts := newTestServer(b, filepath.Join(b.TempDir(), "none"))
	heavy, err := os.ReadFile("../memgraph/testdata/pose_landmark_heavy.json")
	if err != nil {
		b.Fatal(err)
	}
	synth := chainGraph(100_000)
	for _, c := range []struct {
		name, q string
		body    []byte
		opt     memplan.Options
		timeout time.Duration
	}{
		{"pose_landmark_heavy", "?seed=1", heavy, memplan.Options{Seed: 1}, MemPlanTime},
		{"synthetic100k-baselines", "?search=false", synth, memplan.Options{NoSearch: true}, MemPlanTime},
		// The search cut by a 1 s deadline: the time past baselines + 1 s
		// is how late the deadline is met.
		{"synthetic100k-search1s", "?timeout=1s", synth, memplan.Options{Seed: 1}, time.Second},
	} {
		b.Run(c.name+"/socket", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if st, body := ts.postPlanBytes(b, c.q, c.body); st != http.StatusOK {
					b.Fatalf("%d %.300s", st, body)
				}
			}
		})
		b.Run(c.name+"/in-process", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g, err := memplan.Read(c.body, memplan.JSON, "", onnx.Options{})
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
				_, err = memplan.Plan(ctx, g, c.opt)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
