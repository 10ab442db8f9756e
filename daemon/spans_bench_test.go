package daemon

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/quasim/quasim/causal"
)

// benchIteration is one iteration of pipeline fj in the shape a GPU
// runtime records (as causal's benchmarks): a CPU thread launching kernels
// (32 kinds) round robin on 4 streams, each waiting for its launch and,
// one time in ten, for the last kernel of another stream; 500 launches,
// 1,000 spans.
func benchIteration(rng *rand.Rand, it int) []causal.Span {
	spans := make([]causal.Span, 0, 1000)
	cpu := int64(it) * 100_000_000
	last := [4]int{-1, -1, -1, -1}
	for i := range 500 {
		launch := causal.Span{ID: uint64(len(spans) + 1), Pipeline: "fj", Iteration: it, Kernel: "launch", Stream: "cpu", Start: cpu, End: cpu + 5000}
		cpu = launch.End + 1000
		spans = append(spans, launch)
		st := i % 4
		k := causal.Span{ID: uint64(len(spans) + 1), Pipeline: "fj", Iteration: it, Kernel: fmt.Sprint("k", rng.IntN(32)),
			Device: "gpu0", Stream: fmt.Sprint(st), Deps: []uint64{launch.ID}}
		start := launch.End + 2000
		if j := last[st]; j >= 0 {
			start = max(start, spans[j].End)
		}
		if o := last[(st+1)%4]; o >= 0 && rng.IntN(10) == 0 {
			k.Deps = append(k.Deps, spans[o].ID)
			start = max(start, spans[o].End+1000)
		}
		k.Start, k.End = start, start+10000+int64(rng.IntN(190000))
		last[st] = len(spans)
		spans = append(spans, k)
	}
	return spans
}

// BenchmarkSpans measures POST /v1/spans of one 1,000-span iteration
// (validate, store with fsync, retention) and GET /v1/causal of a
// pipeline holding its default retention's worth: 100 such iterations,
// 100,000 spans; both through the real socket.
func BenchmarkSpans(b *testing.B) {
	ts := newTestServer(b, pipelineDirB(b))
	rng := rand.New(rand.NewPCG(7, 0))
	var bodies []string
	for it := range 100 {
		data, err := json.Marshal(benchIteration(rng, it))
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, string(data))
	}
	b.Run("post-1000", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			body := bodies[n%len(bodies)]
			n++
			if status, e, _ := ts.post(b, "/v1/spans", strings.NewReader(body), int64(len(body))); status != 200 {
				b.Fatalf("POST = %d %+v", status, e)
			}
		}
		b.ReportMetric(float64(len(bodies[0])), "body-bytes")
	})
	// Exactly 100 iterations stored: the retention (100,000 spans) keeps
	// the newest 100 batches.
	for _, body := range bodies {
		if status, e, _ := ts.post(b, "/v1/spans", strings.NewReader(body), int64(len(body))); status != 200 {
			b.Fatalf("POST = %d %+v", status, e)
		}
	}
	if fi, err := os.Stat(ts.st.Path()); err == nil {
		b.Logf("state file after 100 batches of 1,000 spans (%d bytes of JSON each): %d bytes", len(bodies[0]), fi.Size())
	}
	b.Run("causal-100k", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			status, body := ts.get(b, "/v1/causal/fj", nil)
			if status != 200 || !strings.Contains(string(body), `"iterations": 100,`) {
				b.Fatalf("GET = %d %.300s", status, body)
			}
		}
	})
}
