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

// htaCritical is one line of what HTA's critical path analysis said of a
// step (testdata/recorders/hta_critical_path.sh writes them): the GPU
// events on its critical path.
type htaCritical struct {
	Dir         string `json:"dir"`
	Instance    int    `json:"instance"`
	Error       string `json:"error"`
	GPUCritical []struct {
		Name   string  `json:"name"`
		Ts     float64 `json:"ts"` // µs, as in the trace
		Weight float64 `json:"weight"`
		Stream int     `json:"stream"`
	} `json:"gpu_critical"`
}

// TestHTACriticalPath compares the GPU kernels quasim puts on the
// critical path (slack within the tie) with HTA's, per step: the share of
// the GPU time HTA puts there that quasim does too. QUASIM_HTA_CP names
// the JSON lines file.
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
		t.Run(fmt.Sprintf("%s#%d", h.Dir, h.Instance), func(t *testing.T) {
			if h.Error != "" {
				t.Skipf("HTA: %s", h.Error)
			}
			compareCritical(t, filepath.Join(dir, h.Dir), h)
		})
	}
}

func compareCritical(t *testing.T, dir string, h htaCritical) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json*"))
	if len(files) != 1 {
		t.Skipf("%s: %d traces", dir, len(files))
	}
	spans, rep, err := ImportChrome(readTrace(t, files[0]), "hta")
	if err != nil {
		t.Fatal(err)
	}
	if h.Instance >= len(rep.Steps) {
		t.Fatalf("step %d of %d", h.Instance, len(rep.Steps))
	}
	n := rep.Steps[h.Instance].N
	var it []Span
	for _, s := range Iterations(spans) {
		if s[0].Iteration == n {
			it = s
		}
	}
	if it == nil {
		t.Fatalf("no iteration for step %d", n)
	}
	g, err := Build(it)
	if err != nil {
		t.Fatal(err)
	}
	slack := g.Slack()
	tie := min(NearZeroSlack, g.base/100)
	near := g.base / 1000 // slack within 0.1% of the step
	var total, covered, coveredNear float64
	type miss struct {
		name   string
		weight float64
		why    string
	}
	var misses []miss
	for _, c := range h.GPUCritical {
		total += c.Weight
		ts := int64(math.Round(c.Ts * 1000))
		k := slices.IndexFunc(it, func(s Span) bool {
			return s.Stream == fmt.Sprint(c.Stream) && s.Start-ts < us && ts-s.Start < us && !s.Boundary
		})
		switch {
		case k < 0:
			misses = append(misses, miss{c.Name, c.Weight, "no span in this step"})
		case slack[k] <= tie:
			covered += c.Weight
			coveredNear += c.Weight
		case slack[k] <= near:
			coveredNear += c.Weight
			misses = append(misses, miss{c.Name, c.Weight, fmt.Sprintf("slack %.1f µs", float64(slack[k])/1e3)})
		default:
			misses = append(misses, miss{c.Name, c.Weight, fmt.Sprintf("slack %.1f µs", float64(slack[k])/1e3)})
		}
	}
	share, shareNear := 1.0, 1.0
	if total > 0 {
		share, shareNear = covered/total, coveredNear/total
	}
	slices.SortFunc(misses, func(a, b miss) int { return cmp.Compare(b.weight, a.weight) })
	var why []string
	for _, m := range misses[:min(3, len(misses))] {
		why = append(why, fmt.Sprintf("%.40s %.0f µs (%s)", m.name, m.weight, m.why))
	}
	t.Logf("HTA GPU time on the critical path %.0f µs in %d events; quasim's (slack ≤ %.0f µs) covers %.1f%%, with slack ≤ 0.1%% of the step (%.0f µs) %.1f%%; largest others: %s",
		total, len(h.GPUCritical), float64(tie)/1e3, 100*share, float64(near)/1e3, 100*shareNear, strings.Join(why, "; "))
	key := fmt.Sprintf("%s#%d", h.Dir, h.Instance)
	if shareNear < 0.9 {
		if why := criticalOpen[key]; why != "" {
			t.Logf("OPEN: %s", why)
			return
		}
		t.Errorf("quasim's critical GPU kernels cover %.1f%% of HTA's critical GPU time, want 90%%", 100*shareNear)
	}
}

// criticalOpen explains the steps where quasim's critical path leaves out
// most of the GPU time HTA's holds (docs/evidence/causal-hta.md).
var criticalOpen = map[string]string{
	"trace_compare/base#0": "HTA's one critical kernel (4 µs) was launched in step 1009 but starts 57 ms after step 1010 began; " +
		"quasim binds such work to the step in whose window it runs (BindReport.Later)",
	"timeline_analysis#0": "quasim ends a step at the next step's start, tied to the host's last span, which ends 4.4 ms after " +
		"the GPU's; HTA's path ends at the step's last GPU kernel, so the kernels before it are critical there and have 4.4 ms of slack here",
}
