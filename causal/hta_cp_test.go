package causal

import (
	"bufio"
	"bytes"
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
// instance: the share of the GPU time HTA puts there that quasim does
// too. QUASIM_HTA_CP names the JSON lines file.
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
	for sc.Scan() {
		var h htaCritical
		if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
			t.Fatalf("%s: %v", cpFile, err)
		}
		t.Run(h.key(), func(t *testing.T) {
			if h.Error != "" {
				t.Skipf("HTA: %.300s", h.Error)
			}
			compareCritical(t, filepath.Join(dir, h.Dir), h)
		})
	}
}

// htaTs is a time HTA printed (µs, whole) in ns.
func htaTs(us float64) int64 { return int64(math.Round(us)) * 1000 }

// iterGraph is one quasim iteration's graph, its slack to the iteration's
// end and to its last GPU op's end.
type iterGraph struct {
	spans          []Span
	g              *Graph
	slack, gpuSlak []int64
}

func compareCritical(t *testing.T, dir string, h htaCritical) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json*"))
	if len(files) != 1 {
		t.Skipf("%s: %d traces", dir, len(files))
	}
	data := readTrace(t, files[0])
	spans, rep, err := ImportChrome(data, "hta")
	if err != nil {
		t.Fatal(err)
	}
	gpuTracks := map[string]bool{} // pid/tid of GPU work
	if _, err := eachEvent(bytes.NewReader(data), func(e *chromeEvent) {
		if gpuCats[strings.ToLower(e.Cat)] {
			gpuTracks[string(e.Pid)+"/"+string(e.Tid)] = true
		}
	}); err != nil {
		t.Fatal(err)
	}
	// The quasim step HTA's window is: the step starting where it starts.
	step := -1
	if len(h.Window) == 2 {
		for _, s := range rep.Steps {
			if d := s.Start - htaTs(h.Window[0]); d > -us && d < us {
				step = s.N
			}
		}
	}
	its := Iterations(spans)
	graphs := map[int]*iterGraph{}
	graph := func(k int) *iterGraph {
		if x := graphs[k]; x != nil {
			return x
		}
		g, err := Build(its[k])
		if err != nil {
			t.Fatal(err)
		}
		x := &iterGraph{spans: its[k], g: g, slack: g.Slack()}
		x.gpuSlak = g.SlackTo(func(i int) bool {
			s := its[k][i]
			return !s.Boundary && gpuTracks[s.Device+"/"+s.Stream]
		})
		graphs[k] = x
		return x
	}
	var total, tied, near, gpuEnd float64
	type miss struct {
		name   string
		weight float64
		why    string
	}
	var misses []miss
	other := map[int]float64{} // GPU time found in another step than HTA's
	for _, c := range h.GPUCritical {
		total += c.Weight
		ts := htaTs(c.Ts)
		var x *iterGraph
		j := -1
		for k, it := range its {
			// HTA prints whole µs; the trace may have ns.
			if j = slices.IndexFunc(it, func(s Span) bool {
				return !s.Boundary && s.Stream == fmt.Sprint(c.Stream) && s.Start-ts < us && ts-s.Start < us
			}); j >= 0 {
				x = graph(k)
				break
			}
		}
		if x == nil {
			misses = append(misses, miss{c.Name, c.Weight, "no span"})
			continue
		}
		if n := x.spans[j].Iteration; step >= 0 && n != step {
			other[n] += c.Weight
		}
		sl, tie := x.slack[j], min(NearZeroSlack, x.g.base/100)
		switch {
		case sl <= tie:
			tied += c.Weight
			near += c.Weight
		case sl <= x.g.base/1000:
			near += c.Weight
			fallthrough
		default:
			misses = append(misses, miss{c.Name, c.Weight, fmt.Sprintf("slack %.1f µs", float64(sl)/1e3)})
		}
		if x.gpuSlak[j] <= tie {
			gpuEnd += c.Weight
		}
	}
	share := func(v float64) float64 {
		if total == 0 {
			return 1
		}
		return v / total
	}
	slices.SortFunc(misses, func(a, b miss) int { return cmp.Compare(b.weight, a.weight) })
	var why []string
	for _, m := range misses[:min(3, len(misses))] {
		why = append(why, fmt.Sprintf("%.40s %.0f µs (%s)", m.name, m.weight, m.why))
	}
	t.Logf("HTA window %s, quasim step %d; HTA's GPU time on the critical path %.0f µs in %d events; quasim's within the tie covers %.1f%%, within 0.1%% of the step %.1f%%, "+
		"against the step's last GPU op %.1f%%; in another quasim step %v; largest others: %s",
		cmp.Or(h.WindowName, "(whole trace)"), step, total, len(h.GPUCritical), 100*share(tied), 100*share(near), 100*share(gpuEnd), other, strings.Join(why, "; "))
	if share(tied) < 0.9 {
		if why := criticalOpen[h.key()]; why != "" {
			t.Logf("OPEN: %s", why)
			return
		}
		t.Errorf("quasim's critical GPU kernels cover %.1f%% of HTA's critical GPU time, want 90%%", 100*share(tied))
	}
}

// criticalOpen explains the steps where quasim's critical path (slack
// within the tie) leaves out more than a tenth of the GPU time HTA's
// holds (docs/evidence/causal-hta.md, section 3).
var criticalOpen = map[string]string{
	"trace_diff/control#2": "the GPU work HTA has and quasim's tie has not (multi_tensor_apply, the optimizer's elementwise kernels at the step's end) " +
		"has 13 to 59 µs of slack: the host launches and reaches the next step's start after the GPU's last op ends; HTA's path weighs host " +
		"gaps between top-level ops at 0, so it ends at the GPU's last op",
	"trace_diff/control#3": "as #2: slack 12 to 44 µs, the GPU's last op ends 44 µs before the host reaches the next step",
	"trace_compare/base#0": "HTA's one critical kernel (4 µs) was launched in step 1009 but starts 57 ms after step 1010 began (HTA weighs the " +
		"57 ms from launch to start as path); quasim binds such work to the step in whose window it runs (BindReport.Later)",
	"timeline_analysis#0": "the host's last event ends 4.4 ms after the GPU's, and 5.1 ms of host time the sampled trace does not show follow " +
		"it before the next step; HTA's path weighs that host time at 0 and ends at the step's last GPU kernel",
}
