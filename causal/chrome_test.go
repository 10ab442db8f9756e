package causal

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

const us = 1000 // ns

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func dropCounts(rep ChromeReport) map[string]int {
	m := map[string]int{}
	for _, d := range rep.Dropped {
		m[d.Reason] = d.Count
	}
	return m
}

func TestImportPyTorchTrace(t *testing.T) {
	all, rep, err := ImportChromeWith(readFixture(t, "pytorch_profiler.json"), "train", ChromeOptions{InputDims: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStepBoundaries(t, all)
	// The hand-worked figures below are of the work, without the steps'
	// boundaries.
	spans := slices.DeleteFunc(slices.Clone(all), func(s Span) bool { return s.Boundary })
	if rep.Events != 42 || rep.Spans != 17 || rep.Deps != 8 || rep.Waits != 1 || rep.Iterations != 2 ||
		rep.Bind != (BindReport{ByLaunch: 6}) {
		t.Errorf("report %+v", rep)
	}
	want := map[string]int{
		"launch flow: the correlation id ties the launch to its GPU work instead": 12,
		"encloses other events on its thread (they are kept)":                     8,
		"metadata event (M)":         4,
		"instant event: no duration": 1,
		"counter event (C)":          1,
		"flow without end":           1,
	}
	if got := dropCounts(rep); !mapsEqual(got, want) {
		t.Errorf("dropped %v, want %v", got, want)
	}
	const gemm = "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32"
	for _, s := range spans {
		wantIter := 1
		if s.Start >= (1700000000000000+300)*us {
			wantIter = 2
		}
		if s.Iteration != wantIter || s.Pipeline != "train" {
			t.Errorf("span %d %s at %d: iteration %d, want %d", s.ID, s.Kernel, s.Start, s.Iteration, wantIter)
		}
		if s.Kernel == gemm && (s.Device != "0" || s.Stream != "7" || len(s.Deps) != 1 ||
			s.Problem != "[[4096],[64,1024],[1024,4096],[],[]]") {
			t.Errorf("gemm span %+v", s)
		}
	}
	g, err := Build(spans)
	if err != nil {
		t.Fatal(err)
	}
	checkReplay(t, g)
	// cudaDeviceSynchronize [400, 462] waits for the ReLU (ends 461) and
	// the sum (415): it is trimmed to [461, 462].
	if g.EndToEnd() != 442*us {
		t.Errorf("end-to-end %d, want 442 µs", g.EndToEnd())
	}
	var path []string
	for _, i := range g.CriticalPath() {
		path = append(path, strings.SplitN(spans[i].Kernel, "<", 2)[0])
	}
	wantPath := []string{"cudaLaunchKernel", "cudaLaunchKernel", "cudaLaunchKernel", "cudaLaunchKernel",
		gemm, "void at::native::vectorized_elementwise_kernel", "cudaDeviceSynchronize"}
	if !slices.Equal(path, wantPath) {
		t.Errorf("critical path %v, want %v", path, wantPath)
	}
	relu, reduce := kernelLike(g, "vectorized_elementwise"), kernelLike(g, "reduce_kernel")
	for _, w := range []whatIf{
		// The gemm 50% faster ends step 2's ReLU at 406 µs, but the sum on
		// stream 8 still ends at 415: the synchronize waits for it now.
		{[]Change{Faster(gemm, 50)}, 396 * us},
		{[]Change{Faster(gemm, 30)}, 409 * us},
		{[]Change{Faster(relu, 50)}, 432 * us},
		{[]Change{Faster(reduce, 50)}, 442 * us},
		{[]Change{At(gemm, 80*us), Faster(relu, 50)}, 402 * us},
	} {
		if got, err := g.Simulate(w.changes...); err != nil || got != w.e2e {
			t.Errorf("%+v: %d (%v), want %d", w.changes, got, err, w.e2e)
		}
	}
	// Per step, the gemm's influence is its share of the step: 100/131 and
	// 110/142.
	sp, err := Spread(spans, SpreadOptions{RNG: rand.New(rand.NewPCG(3, 4))})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range sp {
		if k.Kernel == gemm {
			if e := k.Influence; e.N != 2 || !near(e.Min, 100.0/131) || !near(e.Max, 110.0/142) ||
				!near(e.Median, (100.0/131+110.0/142)/2) {
				t.Errorf("gemm influence %+v", e)
			}
		}
	}
}

// checkStepBoundaries: each step of pytorch_profiler.json lasts its 300
// µs period. Step 1's host does not wait for its GPU work, so the next
// step starts at 300 µs however fast the gemm; step 2's synchronize waits
// for it, so the gemm 5% faster (5.5 µs) ends step 2 5.5 µs sooner.
func checkStepBoundaries(t *testing.T, spans []Span) {
	t.Helper()
	const gemm = "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32"
	for _, it := range Iterations(spans) {
		g, err := Build(it)
		if err != nil {
			t.Fatal(err)
		}
		if g.EndToEnd() != 300*us {
			t.Errorf("step %d lasts %d ns, want its 300 µs period", it[0].Iteration, g.EndToEnd())
		}
		for _, p := range g.Profile() {
			if strings.HasPrefix(p.Kernel, "ProfilerStep#") {
				t.Errorf("step %d: boundary %q is a row", it[0].Iteration, p.Kernel)
			}
			if want := map[int]float64{1: 0, 2: 5.5 / 300 / CurveStep}[it[0].Iteration]; p.Kernel == gemm && !near(p.Influence, want) {
				t.Errorf("step %d: gemm influence %v, want %v", it[0].Iteration, p.Influence, want)
			}
		}
	}
}

func kernelLike(g *Graph, part string) string {
	for _, k := range g.Kernels() {
		if strings.Contains(k, part) {
			return k
		}
	}
	return ""
}

func TestImportPerfettoArray(t *testing.T) {
	spans, rep, err := ImportChrome(readFixture(t, "perfetto_array.json"), "app")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"metadata event (M)": 2, "end (E) without begin (B)": 1, "begin (B) without end (E)": 1}
	if rep.Events != 12 || rep.Spans != 5 || rep.Deps != 2 || !rep.CutOff || !mapsEqual(dropCounts(rep), want) {
		t.Errorf("report %+v", rep)
	}
	var names []string
	for _, s := range spans {
		names = append(names, s.Kernel)
	}
	if !slices.Equal(names, []string{"load", "decode", "fc", "conv", "join"}) {
		t.Fatalf("spans %v", names)
	}
	if !slices.Equal(spans[3].Deps, []uint64{2}) || !slices.Equal(spans[4].Deps, []uint64{4}) {
		t.Errorf("conv deps %v, join deps %v", spans[3].Deps, spans[4].Deps)
	}
	g, err := Build(spans)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.CriticalPath(); g.EndToEnd() != 380*us || !slices.Equal(got, []int{0, 1, 3, 4}) {
		t.Errorf("end-to-end %d, critical path %v", g.EndToEnd(), got)
	}
	if sl := g.Slack()[2]; sl != 165*us {
		t.Errorf("fc slack %d, want 165 µs", sl)
	}
	if got, _ := g.Simulate(Faster("conv", 50)); got != 280*us {
		t.Errorf("conv 50%% faster: %d, want 280 µs", got)
	}
}

func TestImportChromeEdges(t *testing.T) {
	for name, c := range map[string]struct {
		trace, drop string
		spans       int
	}{
		"overlap without nesting": {`[{"name":"a","ph":"X","pid":1,"tid":1,"ts":0,"dur":10},{"name":"b","ph":"X","pid":1,"tid":1,"ts":5,"dur":10}]`,
			"overlaps an event on its thread without nesting", 1},
		"same range": {`[{"name":"a","ph":"X","pid":1,"tid":1,"ts":0,"dur":10},{"name":"b","ph":"X","pid":1,"tid":1,"ts":0,"dur":10}]`,
			"same thread and time range as another event", 1},
		"flow back in time": {`{"traceEvents":[{"name":"a","ph":"X","pid":1,"tid":1,"ts":0,"dur":40},{"name":"b","ph":"X","pid":1,"tid":2,"ts":20,"dur":10},
			{"ph":"s","cat":"c","id":1,"pid":1,"tid":2,"ts":25},{"ph":"f","cat":"c","id":1,"pid":1,"tid":1,"ts":26,"bp":"e"}]}`,
			"flow points back in time", 2},
		"negative dur": {`[{"name":"a","ph":"X","pid":1,"tid":1,"ts":0,"dur":-1},{"name":"b","ph":"X","pid":1,"tid":1,"ts":0,"dur":1}]`,
			"dur: missing, negative or out of range", 1},
		"fractional µs": {`[{"name":"a","ph":"X","pid":"p","tid":"t","ts":0.0015,"dur":1e-3},{"name":"b","ph":"i","pid":1,"tid":1,"ts":0}]`,
			"instant event: no duration", 1},
		"outside steps": {`[{"name":"ProfilerStep#0","ph":"X","pid":1,"tid":1,"ts":0,"dur":10},{"name":"a","ph":"X","pid":1,"tid":1,"ts":2,"dur":1},{"name":"b","ph":"X","pid":1,"tid":1,"ts":20,"dur":1}]`,
			"outside every ProfilerStep#N", 1},
	} {
		spans, rep, err := ImportChrome([]byte(c.trace), "p")
		spans = slices.DeleteFunc(spans, func(s Span) bool { return s.Boundary })
		if err != nil || len(spans) != c.spans || dropCounts(rep)[c.drop] != 1 {
			t.Errorf("%s: %d spans, %+v, %v", name, len(spans), rep, err)
		}
		if err == nil {
			if err := Validate(spans); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	spans, rep, err := ImportChrome([]byte(`[{"name":"a","ph":"X","pid":1,"tid":1,"ts":0,"dur":1},{"name":"b","ph"`), "p")
	if err != nil || len(spans) != 1 || !rep.CutOff || rep.Events != 1 {
		t.Errorf("cut off in an event: %v, %+v, %v", spans, rep, err)
	}
	for name, bad := range map[string]string{
		"data after":          `{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":1}]} x`,
		"events not an array": `{"traceEvents":{}}`,
		"not json":            `{"traceEvents":[`, "no events": `{"foo":1}`, "nothing mapped": `[{"ph":"M","name":"x"}]`,
		"empty": ``, "bad ts": `[{"name":"a","ph":"X","ts":"x","dur":1}]`,
	} {
		if _, _, err := ImportChrome([]byte(bad), "p"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, _, err := ImportChrome(readFixture(t, "perfetto_array.json"), ""); err == nil {
		t.Error("no pipeline name: no error")
	}
}

func TestMicros(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1": 1000, "1.5": 1500, "0.0015": 2, "-2.25": -2250, "1e3": 1000000,
		"1700000000000000.123": 1700000000000000123, "12.3456": 12346,
	} {
		if got, err := micros(json.Number(in)); err != nil || got != want {
			t.Errorf("micros(%s) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "1.2.3", "9999999999999999", "1e300", "NaN", "--1"} {
		if _, err := micros(json.Number(in)); err == nil {
			t.Errorf("micros(%q): no error", in)
		}
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func FuzzImportChrome(f *testing.F) {
	f.Add(readFixture(f, "pytorch_profiler.json"))
	f.Add(readFixture(f, "perfetto_array.json"))
	f.Add(readFixture(f, "go_trace_proc.json"))
	f.Add(readFixture(f, "gpu_steps_synthetic.json"))
	f.Add(readFixture(f, "gpu_bound_synthetic.json"))
	f.Add(readFixture(f, "gpu_order_synthetic.json"))
	f.Add([]byte(`[{"name":"a","ph":"X","pid":1,"tid":1,"ts":0,"dur":10,"bind_id":1,"flow_out":true},{"name":"b","ph":"X","pid":1,"tid":2,"ts":5,"dur":10,"bind_id":1,"flow_in":true},{"ph":"t","id":2,"pid":1,"tid":1,"ts":3}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, rep, err := ImportChrome(data, "p")
		if err != nil {
			return
		}
		if rep.Spans != len(spans) {
			t.Fatalf("report says %d spans, got %d", rep.Spans, len(spans))
		}
		g, err := Build(spans)
		if err != nil {
			t.Fatalf("imported spans do not build: %v", err)
		}
		checkReplay(t, g)
		checkProfile(t, g)
		// The view to each step's last GPU op imports the same trace and
		// replays each iteration to that end.
		spans, rep, err = ImportChromeWith(data, "p", ChromeOptions{ToGPUEnd: true})
		if err != nil {
			t.Fatalf("imports, but not to the GPU's end: %v", err)
		}
		for _, it := range Iterations(spans) {
			g, err := Build(it)
			if err != nil {
				t.Fatalf("iteration %d does not build: %v", it[0].Iteration, err)
			}
			v := g.EndAt(func(i int) bool { return rep.GPUWork(it[i]) })
			checkReplay(t, v)
			checkProfile(t, v)
		}
	})
}

// Traces written by real tools (see testdata/README.md): Node.js's trace
// events and the JSON that `go tool trace` serves its viewer.
func TestImportRealTraces(t *testing.T) {
	for _, c := range []struct {
		file          string
		events, spans int
		deps          int
		dropped       map[string]int
	}{
		{"node_trace.json", 342, 66, 0, map[string]int{
			"async event: not on one thread":                      183,
			"encloses other events on its thread (they are kept)": 26,
			"metadata event (M)":                                  22,
			"instant event: no duration":                          18,
		}},
		{"go_trace_proc.json", 138, 18, 4, map[string]int{
			"counter event (C)":                                   71,
			"metadata event (M)":                                  16,
			"instant event: no duration":                          13,
			"flow event binds to no kept event on its thread":     6,
			"flow step or end without start":                      4,
			"encloses other events on its thread (they are kept)": 2,
		}},
	} {
		spans, rep, err := ImportChrome(readFixture(t, c.file), "real")
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if rep.Events != c.events || rep.Spans != c.spans || rep.Deps != c.deps || !mapsEqual(dropCounts(rep), c.dropped) {
			t.Errorf("%s: report %+v", c.file, rep)
		}
		g, err := Build(spans)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		checkReplay(t, g)
	}
	// In the Go trace, the goroutine main starts in its second round
	// ("go" flow) is a dependency of that goroutine's first slice.
	spans, _, _ := ImportChrome(readFixture(t, "go_trace_proc.json"), "real")
	byID := map[uint64]Span{}
	for _, s := range spans {
		byID[s.ID] = s
	}
	found := false
	for _, s := range spans {
		if s.Kernel == "G11 main.main.func2" && len(s.Deps) == 1 && byID[s.Deps[0]].Kernel == "G1 main.main" {
			found = true
		}
	}
	if !found {
		t.Error("G11 main.main.func2 does not wait for G1 main.main")
	}
}
