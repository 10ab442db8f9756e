package causal

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// htaTraces are Holistic Trace Analysis's test traces with ProfilerStep#N
// markers and GPU work (facebookresearch/HolisticTraceAnalysis,
// tests/data), by path under that folder.
var htaTraces = []string{
	"amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
	"call_stack/backward_thread.json",
	"critical_path/cuda_event_sync/event_sync_trace.json.gz",
	"df_index_resolver/df_index_resolver.json.gz",
	"nccl_parser_config/nccl_data.json.gz",
	"negative_queue_length_values_check/rank0.json.gz",
	"ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
	"timeline_analysis/sampled_rank-0.json.gz",
	"trace_filter/sampled_rank-1.json.gz",
	"trace_compare/base/base.json.gz",
	"trace_compare/test/test.json.gz",
	"trace_diff/control/control.json.gz",
	"trace_diff/test/test.json.gz",
}

// htaData returns the folder QUASIM_HTA_DATA names (HTA's tests/data),
// or skips: CI cannot fetch it.
func htaData(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("QUASIM_HTA_DATA")
	if dir == "" {
		t.Skip("QUASIM_HTA_DATA is unset: set it to the tests/data folder of a copy of github.com/facebookresearch/HolisticTraceAnalysis")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("QUASIM_HTA_DATA: %v", err)
	}
	return dir
}

func readTrace(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return data
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return quantile(s, 0.5)
}

// TestHTATraces checks issue 39's acceptance on HTA's traces: GPU busy
// time inside steps in rows, iteration time against the step period, no
// envelope a row.
func TestHTATraces(t *testing.T) {
	dir := htaData(t)
	for _, name := range htaTraces {
		t.Run(filepath.Base(filepath.Dir(name))+"/"+filepath.Base(name), func(t *testing.T) {
			path := filepath.Join(dir, name)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%v (the copy may lack this file)", err)
			}
			spans, rep, err := ImportChrome(readTrace(t, path), "hta")
			if err != nil {
				t.Fatal(err)
			}
			// Steps with work in them are iterations.
			has := map[int]bool{}
			for _, s := range spans {
				has[s.Iteration] = true
			}
			var periods []float64
			for _, s := range rep.Steps {
				if has[s.N] {
					periods = append(periods, float64(s.Period))
				}
			}
			ps, err := SpreadIterations(Iterations(spans), SpreadOptions{RNG: rand.New(rand.NewPCG(1, 0)), Resamples: 10})
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(ps.Kernels, func(a, b KernelSpread) int { return cmp.Compare(b.Influence.Median, a.Influence.Median) })
			t.Logf("steps %d, bind %+v, GPU in rows %.4f, attributed %.3f, warning %q", len(rep.Steps), rep.Bind, rep.Coverage.Share(), ps.Attributed.Median, rep.Warning)
			for _, s := range rep.Steps {
				t.Logf("  step %d: period %.3f ms, GPU %.3f to %.3f ms, busy %.3f ms, bound %v, host calls %d (%.3f ms)", s.N, float64(s.Period)/1e6, float64(s.GPUStart-s.Start)/1e6, float64(s.GPUEnd-s.Start)/1e6,
					float64(s.GPUBusy)/1e6, s.GPUBound, s.HostCalls, float64(s.HostCallTime)/1e6)
			}
			t.Logf("iterations %d, median e2e %.3f ms, median period %.3f ms", ps.Iterations, ps.EndToEnd.Median/1e6, median(periods)/1e6)
			for k, r := range ps.Kernels[:min(6, len(ps.Kernels))] {
				t.Logf("  %d %.60s share %.3f influence %.3f slack %.0f", k, r.Kernel, r.Share.Median, r.Influence.Median, r.Slack.Median)
			}
			if e, p := ps.EndToEnd.Median, median(periods); e < 0.95*p || e > 1.05*p {
				t.Errorf("median iteration %.3f ms, median step period %.3f ms: not within 5%%", e/1e6, p/1e6)
			}
			if c := rep.Coverage.Share(); c < 0.95 {
				t.Errorf("GPU busy time inside steps in rows %.1f%%, want 95%% or more", 100*c)
			}
			switch name {
			case "ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz":
				checkGPUTop(t, readTrace(t, path), ps, len(periods), median(periods))
			case "trace_diff/control/control.json.gz":
				top := ps.Kernels[:3]
				if !slices.ContainsFunc(top, func(k KernelSpread) bool { return strings.HasPrefix(k.Kernel, "ncclKernel_SendRecv") }) {
					t.Errorf("ncclKernel_SendRecv not in the top three by influence: %s, %s, %s", top[0].Kernel, top[1].Kernel, top[2].Kernel)
				}
			}
			for _, tr := range ps.Tracks {
				if tr.Busy.Max > 1 {
					t.Errorf("track %v busy %v of an iteration", tr.Track, tr.Busy.Max)
				}
			}
			for _, r := range ps.Kernels {
				if envelope(strings.ToLower(r.Kernel), r.Kernel) != "" {
					t.Errorf("row %q is a profiler envelope", r.Kernel)
				}
			}
		})
	}
}

// checkGPUTop: the top five rows by influence are GPU kernels, each
// within 20% of its GPU time per step over the median step period.
func checkGPUTop(t *testing.T, data []byte, ps PipelineSpread, steps int, period float64) {
	t.Helper()
	gpuTime := map[string]int64{}
	if _, err := eachEvent(bytes.NewReader(data), func(e *chromeEvent) {
		if d, err := micros(e.Dur); err == nil && e.Ph == "X" && gpuCats[strings.ToLower(e.Cat)] {
			gpuTime[e.Name] += d
		}
	}); err != nil {
		t.Fatal(err)
	}
	for _, k := range ps.Kernels[:5] {
		gt, ok := gpuTime[k.Kernel]
		want := float64(gt) / float64(steps) / period
		t.Logf("top: %.70s influence %.4f, GPU time per step over the period %.4f", k.Kernel, k.Influence.Median, want)
		if !ok || math.Abs(k.Influence.Median-want) > 0.2*want {
			t.Errorf("%.60s: influence %.4f, GPU time per step over the period %.4f (a GPU kernel: %v)", k.Kernel, k.Influence.Median, want, ok)
		}
	}
}
