package causal

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestImportGPUSteps (synthetic, testdata/gpu_steps_synthetic.json):
// envelopes are no rows, GPU work is bound to its launch's step by
// correlation id or by time, every kernel of a graph launch is kept.
func TestImportGPUSteps(t *testing.T) {
	spans, rep, err := ImportChrome(readFixture(t, "gpu_steps_synthetic.json"), "p")
	if err != nil {
		t.Fatal(err)
	}
	// The GPU-side copy of ProfilerStep#1 is no third step.
	if rep.Iterations != 2 || len(rep.Steps) != 2 {
		t.Errorf("iterations %d, steps %+v; want 2", rep.Iterations, rep.Steps)
	}
	// "late", launched in step 1, starts after step 2 began in a step the
	// GPU did not bound: it is step 2's time.
	if want := (BindReport{ByLaunch: 6, GraphKernels: 3, ByTime: 1, Later: 1, Dropped: 2}); rep.Bind != want {
		t.Errorf("bind %+v, want %+v", rep.Bind, want)
	}
	iter := map[string][]int{}
	for _, s := range spans {
		if s.Boundary {
			continue
		}
		iter[s.Kernel] = append(iter[s.Kernel], s.Iteration)
		if s.Problem != "" {
			t.Errorf("%s: problem %q; rows are by name unless InputDims", s.Kernel, s.Problem)
		}
	}
	for _, bad := range []string{"PyTorch Profiler (0)", "__cupti_profiler__ (-1)", "forward", "ProfilerStep#1", "early", "orphan"} {
		if _, ok := iter[bad]; ok {
			t.Errorf("%q is a span", bad)
		}
	}
	for k, want := range map[string][]int{"gemm": {1, 2}, "g1": {1}, "g2": {1}, "g3": {1}, "late": {2}, "nolaunch": {1}} {
		if got := iter[k]; !slices.Equal(got, want) {
			t.Errorf("%s in iterations %v, want %v", k, got, want)
		}
	}
	d := dropCounts(rep)
	if d["GPU work outside every step window, and no launch in the trace ties it to a step"] != 2 ||
		d["profiler envelope (PyTorch Profiler, __cupti_profiler__): not work"] != 2 ||
		d["annotation (user_annotation, gpu_user_annotation): names the work inside it, not work"] != 2 {
		t.Errorf("dropped %v", d)
	}
	// Each graph kernel depends on the graph launch.
	byID := map[uint64]Span{}
	for _, s := range spans {
		byID[s.ID] = s
	}
	for _, s := range spans {
		if s.Kernel == "g1" || s.Kernel == "g2" || s.Kernel == "g3" {
			if !slices.ContainsFunc(s.Deps, func(d uint64) bool { return byID[d].Kernel == "cudaGraphLaunch" }) {
				t.Errorf("%s deps %v: not on its graph launch", s.Kernel, s.Deps)
			}
		}
	}
	spans, _, err = ImportChromeWith(readFixture(t, "gpu_steps_synthetic.json"), "p", ChromeOptions{InputDims: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range spans {
		if s.Kernel == "gemm" && s.Iteration == 1 && s.Problem != "[[2,3],[3,4]]" {
			t.Errorf("with InputDims, gemm's problem %q", s.Problem)
		}
	}
}

// TestImportToGPUEnd (synthetic, testdata/gpu_steps_synthetic.json): the
// view that ends each step at its last GPU op. "late", launched in step 1
// (450 µs) but run from 520 to 580 µs, in step 2's window, stays step 1's
// with ToGPUEnd, and measured to the GPU work's end (End: GPUWork) step 1
// lasts from its start (100 µs) to there, with "late" last on its path;
// bound by time instead it would end at 340 µs.
func TestImportToGPUEnd(t *testing.T) {
	spans, rep, err := ImportChromeWith(readFixture(t, "gpu_steps_synthetic.json"), "p", ChromeOptions{ToGPUEnd: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := (BindReport{ByLaunch: 6, GraphKernels: 3, ByTime: 1, Dropped: 2}); rep.Bind != want {
		t.Errorf("bind %+v, want %+v (nothing later)", rep.Bind, want)
	}
	if want := []Track{{"0", "7"}, {"0", "8"}}; !slices.Equal(rep.GPUTracks, want) {
		t.Errorf("GPU tracks %v, want %v", rep.GPUTracks, want)
	}
	var gpu []string
	for _, s := range spans {
		if s.Kernel == "late" && s.Iteration != 1 {
			t.Errorf("late in step %d, want 1 (its launch's)", s.Iteration)
		}
		if rep.GPUWork(s) {
			gpu = append(gpu, s.Kernel)
		}
	}
	slices.Sort(gpu)
	if want := []string{"g1", "g2", "g3", "gemm", "gemm", "late", "nolaunch"}; !slices.Equal(gpu, want) {
		t.Errorf("GPU work %v, want %v", gpu, want)
	}
	ps, err := SpreadIterations(Iterations(spans), SpreadOptions{RNG: rand.New(rand.NewPCG(1, 0)), Resamples: 10, End: rep.GPUWork})
	if err != nil {
		t.Fatal(err)
	}
	if e := ps.EndToEnd; ps.EndedAt != 2 || e.Min != 120*us || e.Max != 480*us {
		t.Errorf("ended at the GPU in %d iterations, end to end %v to %v µs; want 2, 120 (step 2's gemm) to 480 (step 1 to late's end)",
			ps.EndedAt, e.Min/us, e.Max/us)
	}
	for _, k := range ps.Kernels {
		if k.Kernel == "late" && (k.Slack.Max != 0 || k.Critical.Median == 0) {
			t.Errorf("late: slack %v, critical %v; want on the path", k.Slack, k.Critical)
		}
	}
}

// TestImportLaunchOrder (synthetic, testdata/gpu_order_synthetic.json):
// to the GPU's end, the memset and copy queued before C without their
// launches in the trace are step 1's by their correlation ids (between
// step 1's calls 10 and 13), and end that step's GPU work with C; E
// (15, between step 1's 13 and step 2's 20) is bound by when it ran. The
// default view binds all three by time, and C to step 2 (later).
func TestImportLaunchOrder(t *testing.T) {
	data := readFixture(t, "gpu_order_synthetic.json")
	steps := func(spans []Span) map[string]int {
		out := map[string]int{}
		for _, s := range spans {
			if !s.Boundary && s.Kernel != "cudaLaunchKernel" {
				out[s.Kernel] = s.Iteration
			}
		}
		return out
	}
	spans, rep, err := ImportChrome(data, "p")
	if err != nil {
		t.Fatal(err)
	}
	if want := (BindReport{ByLaunch: 3, ByTime: 3, Later: 1}); rep.Bind != want {
		t.Errorf("default: bind %+v, want %+v", rep.Bind, want)
	}
	memset, memcpy := "Memset (Device)", "Memcpy HtoD (Pinned -> Device)"
	if got, want := steps(spans), map[string]int{"A": 1, memset: 2, memcpy: 2, "C": 2, "D": 2, "E": 2}; !maps.Equal(got, want) {
		t.Errorf("default: steps %v, want %v", got, want)
	}
	spans, rep, err = ImportChromeWith(data, "p", ChromeOptions{ToGPUEnd: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := (BindReport{ByLaunch: 3, ByTime: 1, ByOrder: 2}); rep.Bind != want {
		t.Errorf("to the GPU's end: bind %+v, want %+v", rep.Bind, want)
	}
	if got, want := steps(spans), map[string]int{"A": 1, memset: 1, memcpy: 1, "C": 1, "D": 2, "E": 2}; !maps.Equal(got, want) {
		t.Errorf("to the GPU's end: steps %v, want %v", got, want)
	}
	ps, err := SpreadIterations(Iterations(spans), SpreadOptions{RNG: rand.New(rand.NewPCG(1, 0)), Resamples: 10, End: rep.GPUWork})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ps.Kernels {
		if (k.Kernel == memset || k.Kernel == memcpy || k.Kernel == "C") && (k.Slack.N != 1 || k.Slack.Max != 0) {
			t.Errorf("%s: slack %+v, want 0 in step 1", k.Kernel, k.Slack)
		}
	}
}

// TestImportGPUBound (synthetic, testdata/gpu_bound_synthetic.json): a
// loop whose host runs ahead of a busy GPU is GPU-bound; its iterations
// last the GPU's 120 µs, its blocked launches are no rows, and each
// kernel's influence is its share of the GPU's time.
func TestImportGPUBound(t *testing.T) {
	spans, rep, err := ImportChrome(readFixture(t, "gpu_bound_synthetic.json"), "p")
	if err != nil {
		t.Fatal(err)
	}
	want := []StepReport{
		{N: 1, Start: 0, Period: 120 * us, GPUStart: 20 * us, GPUEnd: 140 * us, GPUBusy: 120 * us, GPUBound: true, HostCalls: 2, HostCallTime: 10 * us},
		{N: 2, Start: 120 * us, Period: 120 * us, GPUStart: 140 * us, GPUEnd: 260 * us, GPUBusy: 120 * us, GPUBound: true, HostCalls: 2, HostCallTime: 95 * us},
		{N: 3, Start: 240 * us, Period: 140 * us, GPUStart: 260 * us, GPUEnd: 380 * us, GPUBusy: 120 * us, GPUBound: true, HostCalls: 2, HostCallTime: 85 * us},
	}
	if !slices.Equal(rep.Steps, want) {
		t.Errorf("steps\n%+v\nwant\n%+v", rep.Steps, want)
	}
	ps, err := SpreadIterations(Iterations(spans), SpreadOptions{RNG: rand.New(rand.NewPCG(1, 0)), Resamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	if e := ps.EndToEnd; e.Min != 120*us || e.Max != 120*us {
		t.Errorf("iteration time %+v, want 120 µs each", e)
	}
	infl := map[string]float64{}
	for _, k := range ps.Kernels {
		infl[k.Kernel] = k.Influence.Median
	}
	if len(infl) != 2 || math.Abs(infl["A"]-80.0/120) > 1e-9 || math.Abs(infl["B"]-40.0/120) > 1e-9 {
		t.Errorf("influence %v, want A 0.667, B 0.333 and no other row", infl)
	}
}

// TestImportGPUWaits (synthetic, testdata/gpu_waits_synthetic.json): a
// synchronous copy waits for its copy; an unexplained gap behind a kernel
// whose launch returned earlier stays lag, even when another host call
// ends in it; coverage under 90% warns; a
// synchronize after the last step joins no step.
func TestImportGPUWaits(t *testing.T) {
	spans, rep, err := ImportChrome(readFixture(t, "gpu_waits_synthetic.json"), "p")
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Span{}
	byID := map[uint64]Span{}
	for _, s := range spans {
		by[s.Kernel], byID[s.ID] = s, s
	}
	cp := by["cudaMemcpyAsync"]
	if cp.Start != 440*us || !slices.ContainsFunc(cp.Deps, func(d uint64) bool { return byID[d].Kernel == "Memcpy DtoH (Device -> Pageable)" }) {
		t.Errorf("copy call %+v: want it to start at 440 µs, after its copy", cp)
	}
	if rep.Gaps != (GapReport{Lag: 2}) || by["k2"].HostWait {
		t.Errorf("gaps %+v, k2 host wait %v; want k2's and big's gaps kept as lag", rep.Gaps, by["k2"].HostWait)
	}
	// big's launch returned before its gap: the launch call that ends in
	// the gap (overlap's) did not release it.
	if d := by["big"].Deps; len(d) != 1 || byID[d[0]].End != 465*us {
		t.Errorf("big depends on %v, want only its own launch", d)
	}
	if c := rep.Coverage; c.GPUInSteps != 830*us || c.GPUInRows != 730*us || !strings.Contains(rep.Warning, "88.0%") {
		t.Errorf("coverage %+v, warning %q", c, rep.Warning)
	}
	if _, ok := by["cudaDeviceSynchronize"]; ok || dropCounts(rep)["outside every ProfilerStep#N"] != 1 {
		t.Errorf("the synchronize after the step: dropped %v", dropCounts(rep))
	}
}

// TestImportRefusals (synthetic): a trace nothing can be made of is
// refused with its reason and what to do.
func TestImportRefusals(t *testing.T) {
	for name, c := range map[string]struct{ trace, want string }{
		"marker on another pid": {`[{"name":"ProfilerStep#1","cat":"user_annotation","ph":"X","pid":1,"tid":1,"ts":0,"dur":100},
			{"name":"aten::add","cat":"cpu_op","ph":"X","pid":2,"tid":2,"ts":10,"dur":5}]`,
			"the ProfilerStep#N markers are on pid 1, but the host work is on pid 2"},
		"no GPU events, nothing in a step": {`[{"name":"ProfilerStep#1","cat":"user_annotation","ph":"X","pid":1,"tid":1,"ts":0,"dur":100},
			{"name":"aten::add","cat":"cpu_op","ph":"X","pid":1,"tid":1,"ts":200,"dur":5}]`,
			"no GPU events (kernel, gpu_memcpy, gpu_memset), and no host event inside a step"},
		"no events with a duration": {`[{"name":"x","ph":"i","pid":1,"tid":1,"ts":0}]`,
			"no GPU events (kernel, gpu_memcpy, gpu_memset) and no host events with a duration"},
		"an execution trace": {`{"schema":"1.0.1","pid":7,"nodes":[]}`,
			"no traceEvents (an object with keys schema, pid, nodes): not a Chrome trace event file"},
		"not events": {`[[1,2],[3,4]]`, "event 0 is not a trace event"},
	} {
		_, _, err := ImportChrome([]byte(c.trace), "p")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to say %q", name, err, c.want)
		}
	}
}

// TestImportGPUBoundOverlap (synthetic, testdata/gpu_overlap_synthetic.json):
// a GPU-bound step's kernel that starts after the next step began, while
// the next step's own GPU work already runs on another stream, is in the
// next step's period (its iteration then lasts no longer than its
// period); one the next step's work waits behind on the same stream
// stays its own.
func TestImportGPUBoundOverlap(t *testing.T) {
	spans, rep, err := ImportChrome(readFixture(t, "gpu_overlap_synthetic.json"), "p")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Steps) != 3 || !rep.Steps[0].GPUBound || !rep.Steps[1].GPUBound || rep.Steps[2].GPUBound {
		t.Fatalf("steps %+v: want 1 and 2 GPU-bound, 3 not", rep.Steps)
	}
	iter := map[string]int{}
	for _, s := range spans {
		if len(s.Kernel) == 1 { // the kernels A to F, not host calls or boundaries
			iter[s.Kernel] = s.Iteration
		}
	}
	if want := map[string]int{"A": 1, "C": 2, "D": 2, "F": 2, "E": 3}; !maps.Equal(iter, want) || rep.Bind.Later != 1 {
		t.Errorf("kernels by step %v, later %d; want %v, 1", iter, rep.Bind.Later, want)
	}
	if s := rep.Steps[0]; s.GPUEnd-s.Start != 100*us || s.GPUBusy != 90*us {
		t.Errorf("step 1 %+v: want its GPU work to end at 100 µs, 90 µs busy", s)
	}
	var e2e []int64
	for _, it := range Iterations(spans) {
		g, err := Build(it)
		if err != nil {
			t.Fatal(err)
		}
		e2e = append(e2e, g.EndToEnd())
	}
	// Step 1: A alone (10 to 100 µs), within its 100 µs period (C kept
	// there made it 160). Step 2: D, C and F (105 to 245 µs).
	if want := []int64{90 * us, 140 * us, 100 * us}; !slices.Equal(e2e, want) {
		t.Errorf("iteration times %v, want %v", e2e, want)
	}
}

// TestImportCUDASync (synthetic, testdata/gpu_cudasync_synthetic.json):
// cuda_sync records are never spans; a Stream Wait Event ties the waiting
// stream's next work to the recorded event's work (not to the other
// stream's work that ended last in the gap); an Event Sync makes the host
// call wait for the recorded work only, and for none when the event had
// none.
func TestImportCUDASync(t *testing.T) {
	spans, rep, err := ImportChrome(readFixture(t, "gpu_cudasync_synthetic.json"), "p")
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]Span{}
	byID := map[uint64]Span{}
	for _, s := range spans {
		by[s.Kernel], byID[s.ID] = append(by[s.Kernel], s), s
	}
	deps := func(s Span) []string {
		var out []string
		for _, d := range s.Deps {
			out = append(out, byID[d].Kernel)
		}
		slices.Sort(out)
		return out
	}
	for _, k := range []string{"Stream Wait Event", "Event Sync", "Context Sync"} {
		if len(by[k]) > 0 {
			t.Errorf("%s is a span", k)
		}
	}
	if n := dropCounts(rep)["CUDA synchronization record (cuda_sync): read as a dependency, not work"]; n != 4 {
		t.Errorf("cuda_sync records dropped: %d, want 4 (%v)", n, dropCounts(rep))
	}
	if d := deps(by["k2"][0]); !slices.Equal(d, []string{"cudaLaunchKernel", "k1"}) || rep.Gaps.Event != 0 {
		t.Errorf("k2 depends on %v (gaps %+v), want its launch and k1, the recorded work it waited for", d, rep.Gaps)
	}
	sync := by["cudaEventSynchronize"]
	if len(sync) != 2 {
		t.Fatalf("%d cudaEventSynchronize spans", len(sync))
	}
	if d := deps(sync[0]); !slices.Contains(d, "k0") || slices.Contains(d, "k1") || sync[0].Start != 222*us {
		t.Errorf("first cudaEventSynchronize %+v depends on %v, want k0 only of the GPU work, and to start when k0 ends", sync[0], d)
	}
	if d := deps(sync[1]); slices.ContainsFunc(d, func(k string) bool { return strings.HasPrefix(k, "k") }) || sync[1].Start != 300*us {
		t.Errorf("cudaEventSynchronize on an unrecorded event depends on %v, starts %d; want no GPU work, unchanged", d, sync[1].Start)
	}
	if d := deps(by["cudaDeviceSynchronize"][0]); !slices.Equal(d, []string{"k0", "k1", "k2"}) {
		t.Errorf("cudaDeviceSynchronize depends on %v, want every stream's last work", d)
	}
}
