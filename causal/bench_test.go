package causal

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchTrace makes a pipeline of n spans the shape a GPU runtime records:
// a CPU thread launching kernels (32 kinds) round robin on 4 streams, each
// kernel waiting for its launch and, one time in ten, for the last kernel
// of another stream (an event); 500 launches per iteration.
func benchTrace(n int) []Span {
	rng := rand.New(rand.NewPCG(100, 0))
	spans := make([]Span, 0, n)
	var cpu int64
	var last [4]int // index of each stream's last kernel, -1 for none
	last = [4]int{-1, -1, -1, -1}
	for i := 0; len(spans)+1 < n; i++ {
		it := i / 500
		launch := Span{ID: uint64(len(spans) + 1), Pipeline: "bench", Iteration: it, Kernel: "launch",
			Stream: "cpu", Start: cpu, End: cpu + 5000}
		cpu = launch.End + 1000
		spans = append(spans, launch)
		st := i % 4
		k := Span{ID: uint64(len(spans) + 1), Pipeline: "bench", Iteration: it, Kernel: fmt.Sprint("k", rng.IntN(32)),
			Device: "gpu0", Stream: fmt.Sprint(st), Deps: []uint64{launch.ID}}
		start := launch.End + 2000
		if j := last[st]; j >= 0 {
			start = max(start, spans[j].End)
		}
		if o := last[(st+1)%4]; o >= 0 && rng.IntN(10) == 0 && spans[o].Iteration == it {
			k.Deps = append(k.Deps, spans[o].ID)
			start = max(start, spans[o].End+1000)
		}
		k.Start, k.End = start, start+10000+int64(rng.IntN(190000))
		last[st] = len(spans)
		spans = append(spans, k)
	}
	return spans
}

func BenchmarkBuild100k(b *testing.B) {
	spans := benchTrace(100000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(spans); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSimulate100k(b *testing.B) {
	g, err := Build(benchTrace(100000))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Simulate(Faster("k7", 20), At("k3", 5000)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProfile100k: critical path, slack and 33 kernels' 11-point
// curves (363 replays) of the whole trace.
func BenchmarkProfile100k(b *testing.B) {
	g, err := Build(benchTrace(100000))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		g.Profile()
	}
}

// BenchmarkSpread100k: per-iteration graphs and curves (100 iterations)
// with 1000 bootstrap resamples per figure.
func BenchmarkSpread100k(b *testing.B) {
	spans := benchTrace(100000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Spread(spans, SpreadOptions{RNG: rand.New(rand.NewPCG(1, 1))}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImportChrome100k: the trace written as Chrome JSON, with a flow
// per launch, read back.
func BenchmarkImportChrome100k(b *testing.B) {
	spans := benchTrace(100000)
	var events []map[string]any
	for _, s := range spans {
		events = append(events, map[string]any{"name": s.Kernel, "ph": "X", "pid": s.Device, "tid": s.Stream,
			"ts": float64(s.Start) / 1000, "dur": float64(s.Duration()) / 1000})
		if s.Kernel != "launch" {
			l := spans[s.Deps[0]-1]
			events = append(events,
				map[string]any{"ph": "s", "cat": "ac2g", "id": s.ID, "pid": l.Device, "tid": l.Stream, "ts": float64(l.Start) / 1000},
				map[string]any{"ph": "f", "cat": "ac2g", "id": s.ID, "pid": s.Device, "tid": s.Stream, "ts": float64(s.Start) / 1000, "bp": "e"})
		}
	}
	data, err := json.Marshal(map[string]any{"traceEvents": events})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		got, rep, err := ImportChrome(data, "bench")
		if err != nil || len(got) != len(spans) || rep.Deps != len(spans)/2 {
			b.Fatalf("%d spans, %+v, %v", len(got), rep, err)
		}
	}
}
