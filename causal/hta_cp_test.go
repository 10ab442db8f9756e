package causal

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// htaCritical is one line of what HTA's critical path analysis said of an
// annotation instance (testdata/recorders/hta_critical_path.sh writes
// them): the window it analysed and the GPU events on its critical path.
type htaCritical struct {
	Dir         string    `json:"dir"`
	Instance    *int      `json:"instance"`
	Last        bool      `json:"include_last_step"`
	Error       string    `json:"error"`
	Window      []float64 `json:"window"` // µs, as in the trace
	WindowName  string    `json:"window_name"`
	PathEnd     float64   `json:"path_end"`
	GPUCritical []struct {
		Name   string  `json:"name"`
		Ts     float64 `json:"ts"` // µs, as in the trace (whole µs)
		Weight float64 `json:"weight"`
		Stream int     `json:"stream"`
	} `json:"gpu_critical"`
}

func (h htaCritical) key() string {
	k := h.Dir + "#all"
	if h.Instance != nil {
		k = fmt.Sprintf("%s#%d", h.Dir, *h.Instance)
	}
	if h.Last {
		k += "+last"
	}
	return k
}

// TestHTACriticalPath compares the GPU kernels quasim puts on the
// critical path (slack within the tie) with HTA's, per annotation
// instance and per trace: the share of the GPU time HTA puts there that
// quasim does too, in the default view (each step to the next step's
// start) and in the view that ends each step at its last GPU op
// (ChromeOptions.ToGPUEnd, SpreadOptions.End with ChromeReport.GPUWork),
// which is HTA's definition. The second must hold 90% per trace.
// QUASIM_HTA_CP names the JSON lines file.
func TestHTACriticalPath(t *testing.T) {
	dir := htaData(t)
	cpFile := os.Getenv("QUASIM_HTA_CP")
	if cpFile == "" {
		t.Skip("QUASIM_HTA_CP is unset: set it to the output of causal/testdata/recorders/hta_critical_path.sh")
	}
	f, err := os.Open(cpFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	perTrace := map[string]*cover{}
	var traces []string
	for sc.Scan() {
		var h htaCritical
		if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
			t.Fatalf("%s: %v", cpFile, err)
		}
		t.Run(h.key(), func(t *testing.T) {
			if h.Error != "" {
				t.Skipf("HTA: %.300s", h.Error)
			}
			c := compareCritical(t, filepath.Join(dir, h.Dir), h)
			if c.total == 0 {
				return
			}
			if perTrace[h.Dir] == nil {
				perTrace[h.Dir] = &cover{}
				traces = append(traces, h.Dir)
			}
			perTrace[h.Dir].add(c)
		})
	}
	for _, d := range traces {
		c := perTrace[d]
		t.Logf("per trace %s: HTA's critical GPU time %.0f µs; quasim's within the tie covers %.1f%%, within 0.1%% of the step %.1f%%; "+
			"measured to the step's last GPU op %.1f%%", d, c.total, 100*c.share(c.tied), 100*c.share(c.near), 100*c.share(c.gpuEnd))
		if c.share(c.tied) < 0.9 {
			t.Logf("%s, default view under 90%%: %s", d, criticalOpen[d])
		}
		if c.share(c.gpuEnd) < 0.9 {
			t.Errorf("%s: measured to the step's last GPU op, quasim's critical GPU kernels cover %.1f%% of HTA's critical GPU time, want 90%%", d, 100*c.share(c.gpuEnd))
		}
	}
}

// cover is HTA's critical GPU time (total) and how much of it quasim
// puts on its critical path: within the tie (tied), within 0.1% of the
// step (near), and within the tie measured to the step's last GPU op
// (gpuEnd).
type cover struct{ total, tied, near, gpuEnd float64 }

func (c *cover) add(o cover) {
	c.total, c.tied, c.near, c.gpuEnd = c.total+o.total, c.tied+o.tied, c.near+o.near, c.gpuEnd+o.gpuEnd
}

func (c cover) share(v float64) float64 {
	if c.total == 0 {
		return 1
	}
	return v / c.total
}

// htaTs is a time HTA printed (µs, whole) in ns.
func htaTs(us float64) int64 { return int64(math.Round(us)) * 1000 }

// htaView is one way of importing and measuring the trace: its
// iterations, and each one's graph and slack, built when first asked.
type htaView struct {
	its    [][]Span
	end    func(Span) bool // nil: each iteration to its end
	graphs map[int]*iterGraph
}

type iterGraph struct {
	spans []Span
	g     *Graph
	slack []int64
}

func newHTAView(t *testing.T, data []byte, gpuEnd bool) (*htaView, ChromeReport) {
	spans, rep, err := ImportChromeWith(data, "hta", ChromeOptions{ToGPUEnd: gpuEnd})
	if err != nil {
		t.Fatal(err)
	}
	v := &htaView{its: Iterations(spans), graphs: map[int]*iterGraph{}}
	if gpuEnd {
		v.end = rep.GPUWork
	}
	return v, rep
}

// find returns the iteration graph holding HTA's critical event c and
// its index there (HTA prints whole µs; the trace may have ns).
func (v *htaView) find(t *testing.T, stream int, ts int64) (*iterGraph, int) {
	for k, it := range v.its {
		j := slices.IndexFunc(it, func(s Span) bool {
			return !s.Boundary && s.Stream == fmt.Sprint(stream) && s.Start-ts < us && ts-s.Start < us
		})
		if j < 0 {
			continue
		}
		x := v.graphs[k]
		if x == nil {
			g, err := Build(it)
			if err != nil {
				t.Fatal(err)
			}
			if v.end != nil {
				g = g.EndAt(func(i int) bool { return v.end(it[i]) })
			}
			x = &iterGraph{spans: it, g: g, slack: g.Slack()}
			v.graphs[k] = x
		}
		return x, j
	}
	return nil, -1
}

func compareCritical(t *testing.T, dir string, h htaCritical) cover {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json*"))
	if len(files) != 1 {
		t.Skipf("%s: %d traces", dir, len(files))
	}
	data := readTrace(t, files[0])
	step, gpuEnd := -1, -1 // the quasim step HTA's window is: the step starting where it starts
	stepView, rep := newHTAView(t, data, false)
	gpuView, _ := newHTAView(t, data, true)
	if len(h.Window) == 2 {
		for _, s := range rep.Steps {
			if d := s.Start - htaTs(h.Window[0]); d > -us && d < us {
				step = s.N
			}
		}
	}
	var c cover
	type miss struct {
		name   string
		weight float64
		why    string
	}
	var misses, gpuMisses []miss
	other := map[int]float64{} // GPU time found in another step than HTA's
	tie := func(x *iterGraph) int64 { return min(NearZeroSlack, x.g.base/100) }
	for _, e := range h.GPUCritical {
		c.total += e.Weight
		ts := htaTs(e.Ts)
		if x, j := gpuView.find(t, e.Stream, ts); x != nil {
			if x.slack[j] <= tie(x) {
				c.gpuEnd += e.Weight
			} else {
				gpuMisses = append(gpuMisses, miss{e.Name, e.Weight, fmt.Sprintf("slack %.1f µs", float64(x.slack[j])/1e3)})
			}
			if n := x.spans[j].Iteration; step >= 0 && n != step {
				gpuEnd = n
			}
		}
		x, j := stepView.find(t, e.Stream, ts)
		if x == nil {
			misses = append(misses, miss{e.Name, e.Weight, "no span"})
			continue
		}
		if n := x.spans[j].Iteration; step >= 0 && n != step {
			other[n] += e.Weight
		}
		switch sl := x.slack[j]; {
		case sl <= tie(x):
			c.tied += e.Weight
			c.near += e.Weight
		case sl <= x.g.base/1000:
			c.near += e.Weight
			fallthrough
		default:
			misses = append(misses, miss{e.Name, e.Weight, fmt.Sprintf("slack %.1f µs", float64(sl)/1e3)})
		}
	}
	largest := func(ms []miss) string {
		slices.SortFunc(ms, func(a, b miss) int { return cmp.Compare(b.weight, a.weight) })
		var why []string
		for _, m := range ms[:min(3, len(ms))] {
			why = append(why, fmt.Sprintf("%.40s %.0f µs (%s)", m.name, m.weight, m.why))
		}
		return strings.Join(why, "; ")
	}
	t.Logf("HTA window %s, quasim step %d; HTA's GPU time on the critical path %.0f µs in %d events; quasim's within the tie covers %.1f%%, within 0.1%% of the step %.1f%%, "+
		"measured to the step's last GPU op %.1f%% (a GPU-end step other than HTA's: %d); in another quasim step %v; largest others: %s; to the GPU's end: %s",
		cmp.Or(h.WindowName, "(whole trace)"), step, c.total, len(h.GPUCritical), 100*c.share(c.tied), 100*c.share(c.near), 100*c.share(c.gpuEnd), gpuEnd, other,
		largest(misses), largest(gpuMisses))
	return c
}

// criticalOpen explains the traces where quasim's critical path in the
// default view (each step to the next step's start) leaves out more than
// a tenth of the GPU time HTA's holds (docs/evidence/causal-hta.md,
// section 3); measured to the step's last GPU op, none does.
var criticalOpen = map[string]string{
	"trace_diff/control": "the GPU work HTA has and quasim's tie has not (multi_tensor_apply, the optimizer's elementwise kernels at the step's end) " +
		"has 12 to 59 µs of slack: the host launches and reaches the next step's start after the GPU's last op ends; HTA's path weighs host " +
		"gaps between top-level ops at 0, so it ends at the GPU's last op",
	"trace_compare/base": "HTA's one critical kernel (4 µs) in #0 was launched in step 1009 but starts 57 ms after step 1010 began; the default " +
		"view binds such work to the step in whose window it runs (BindReport.Later)",
	"timeline_analysis": "in #0 the host's last event ends 4.4 ms after the GPU's, and 5.1 ms of host time the sampled trace does not show follow " +
		"it before the next step; HTA's path weighs that host time at 0 and ends at the step's last GPU kernel",
}
