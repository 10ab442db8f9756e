package causal

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/quasim/quasim/causal/causaltest"
)

// profileTrace imports a trace and summarises it as causal show does:
// one graph per iteration, medians over them.
func profileTrace(t *testing.T, data []byte) ([]Span, ChromeReport, map[string]KernelSpread) {
	t.Helper()
	spans, rep, err := ImportChrome(data, "p")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := SpreadIterations(Iterations(spans), SpreadOptions{RNG: rand.New(rand.NewPCG(1, 0)), Resamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]KernelSpread{}
	for _, k := range ps.Kernels {
		out[k.Kernel] = k
	}
	return spans, rep, out
}

// TestImportForkJoinWithoutMarkers is issue 27's trace: a fork-join
// repeated 50 times with host time between iterations and no
// ProfilerStep markers (synthetic, causaltest.ForkJoin).
func TestImportForkJoinWithoutMarkers(t *testing.T) {
	tr := causaltest.Make(causaltest.ForkJoin())
	spans, rep, got := profileTrace(t, tr.JSON)
	// Per iteration: 3 launches with their flows, the join, the
	// synchronize waiting for both streams.
	if rep.IterationsFrom != FromRepeats || rep.Iterations != 50 || rep.Tracks != 3 || rep.RepeatingTracks != 3 ||
		rep.Deps != 6*50 || rep.Waits != 50 || rep.Gaps != (GapReport{}) || rep.Warning != "" || len(spans) != 7*50 {
		t.Errorf("report %+v, %d spans", rep, len(spans))
	}
	want := map[string]float64{"A": 2.0 / 3, "B": 0, "C": 1.0 / 3}
	for k, w := range want {
		truth, _ := tr.Median(k)
		if g := got[k].Influence.Median; math.Abs(g-w) > 0.05 || math.Abs(g-truth) > 0.005 {
			t.Errorf("influence of %s = %.3f, want %.3f ± 0.05 (the synthetic machine's %.3f)", k, g, w, truth)
		}
	}
	// B may take 700 µs longer, less the 6 µs by which its launch
	// follows A's (the machine: 2 µs less again, C's event wait, which
	// the trace does not show).
	if sl := got["B"].Slack; sl.Median != 694*us || sl.Min != sl.Max || got["A"].Slack.Max != 0 || got["C"].Slack.Max != 0 {
		t.Errorf("slack of B %+v, of A %+v, of C %+v; want 694 µs, 0, 0", sl, got["A"].Slack, got["C"].Slack)
	}
}

// TestImportRandomIterations draws pipelines of random stage times and
// stream layouts, with and without the host thread and the join flows,
// and checks each kernel's influence against the truth of its iterations.
func TestImportRandomIterations(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	for c := range 60 {
		tr := causaltest.Random(rng)
		res := causaltest.Make(tr)
		_, rep, got := profileTrace(t, res.JSON)
		if rep.IterationsFrom != FromRepeats || rep.Iterations != tr.Iters {
			t.Errorf("case %d: %d iterations from %s, want %d inferred", c, rep.Iterations, rep.IterationsFrom, tr.Iters)
		}
		for _, k := range res.Kernels {
			w, sl := res.Median(k)
			if g := got[k].Influence.Median; math.Abs(g-w) > 0.05 {
				t.Errorf("case %d (%d stages, %d iterations, host %v, join flows %v): influence of %s = %.3f, want %.3f ± 0.05",
					c, len(tr.Stages), tr.Iters, tr.Host, tr.JoinFlows, k, g, w)
			}
			// The model does not see the machine's event latency. Without
			// join flows, a join the kernel did not wait for last leaves
			// no trace: its slack then runs to a later span, at least the
			// truth.
			if g := got[k].Slack.Median; math.Abs(g-sl) > 10*us && (tr.JoinFlows || g < sl-10*us) {
				t.Errorf("case %d (join flows %v): slack of %s = %.0f ns, want %.0f ± 10 µs", c, tr.JoinFlows, k, g, sl)
			}
		}
	}
}

// TestRepeats: a block copied k times repeats a multiple of k times; one
// span more or less and it does not (unless the block is one kernel).
func TestRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		block := make([]string, 1+rng.IntN(6))
		for i := range block {
			block[i] = string(rune('a' + rng.IntN(3)))
		}
		k := 1 + rng.IntN(8)
		var seq []string
		for range k {
			seq = append(seq, block...)
		}
		if r := repeats(seq); r%k != 0 {
			t.Fatalf("repeats(%v × %d) = %d, not a multiple of %d", block, k, r, k)
		}
		if r := repeats(seq); len(seq)%r != 0 {
			t.Fatalf("repeats(%v) = %d does not divide %d", seq, r, len(seq))
		}
	}
	tests := []struct {
		seq  string
		want int
	}{{"", 0}, {"a", 1}, {"aaaa", 4}, {"abab", 2}, {"ababa", 1}, {"abcabcab", 1}, {"aabaab", 2}, {"abcabdabcabd", 2}}
	for _, tt := range tests {
		seq := strings.Split(tt.seq, "")
		if tt.seq == "" {
			seq = nil
		}
		if got := repeats(seq); got != tt.want {
			t.Errorf("repeats(%q) = %d, want %d", tt.seq, got, tt.want)
		}
	}
}

// TestNoIterationsWarns: a trace whose kernel sequence does not repeat is
// one iteration, and the report says what that means.
func TestNoIterationsWarns(t *testing.T) {
	trace := `[{"name":"a","cat":"kernel","ph":"X","pid":0,"tid":7,"ts":0,"dur":10},
		{"name":"b","cat":"kernel","ph":"X","pid":0,"tid":7,"ts":10,"dur":10},
		{"name":"a","cat":"kernel","ph":"X","pid":0,"tid":7,"ts":20,"dur":10}]`
	spans, rep, err := ImportChrome([]byte(trace), "p")
	if err != nil || len(spans) != 3 || rep.IterationsFrom != FromNone || rep.Iterations != 0 ||
		!strings.Contains(rep.Warning, "the whole trace is profiled as one iteration") {
		t.Fatalf("%d spans, %+v, %v", len(spans), rep, err)
	}
	for _, s := range spans {
		if s.Iteration != 0 {
			t.Errorf("span %d in iteration %d", s.ID, s.Iteration)
		}
	}
}

// TestModelGaps: an idle gap on a GPU stream is a wait on the GPU span of
// another stream that ended last in it, else on a host call that did,
// else on the host unseen; a short gap stays as it is.
func TestModelGaps(t *testing.T) {
	const a = `{"name":"A","cat":"kernel","ph":"X","pid":0,"tid":7,"ts":0,"dur":100},`
	const c = `{"name":"C","cat":"kernel","ph":"X","pid":0,"tid":7,"ts":300,"dur":100}`
	tests := []struct {
		name  string
		trace string
		gaps  GapReport
		dep   string // the kernel C waits on, if any
	}{
		{"event", "[" + a + `{"name":"B","cat":"kernel","ph":"X","pid":0,"tid":8,"ts":0,"dur":295},` + c + "]", GapReport{Event: 1}, "B"},
		{"host", "[" + a + `{"name":"cudaLaunchKernel","ph":"X","pid":1,"tid":1,"ts":250,"dur":40},` + c + "]", GapReport{Host: 1}, "cudaLaunchKernel"},
		{"the latest", "[" + a + `{"name":"B","cat":"kernel","ph":"X","pid":0,"tid":8,"ts":0,"dur":250},` +
			`{"name":"cudaLaunchKernel","ph":"X","pid":1,"tid":1,"ts":250,"dur":40},` + c + "]", GapReport{Host: 1}, "cudaLaunchKernel"},
		{"unseen", "[" + a + c + "]", GapReport{HostUnseen: 1}, ""},
		{"after the gap", "[" + a + `{"name":"B","cat":"kernel","ph":"X","pid":0,"tid":8,"ts":0,"dur":50},` + c + "]", GapReport{HostUnseen: 1}, ""},
		{"short", "[" + a + `{"name":"C","cat":"kernel","ph":"X","pid":0,"tid":7,"ts":109,"dur":100}]`, GapReport{}, ""},
		{"host threads keep gaps", `[{"name":"f","ph":"X","pid":1,"tid":1,"ts":0,"dur":100},{"name":"g","ph":"X","pid":1,"tid":1,"ts":300,"dur":100}]`, GapReport{}, ""},
	}
	for _, tt := range tests {
		spans, rep, err := ImportChrome([]byte(tt.trace), "p")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if rep.Gaps != tt.gaps {
			t.Errorf("%s: gaps %+v, want %+v", tt.name, rep.Gaps, tt.gaps)
		}
		byID := map[uint64]Span{}
		for _, s := range spans {
			byID[s.ID] = s
		}
		for _, s := range spans {
			if s.Kernel != "C" {
				continue
			}
			var deps []string
			for _, d := range s.Deps {
				deps = append(deps, byID[d].Kernel)
			}
			if want := tt.dep; (want == "" && len(deps) != 0) || (want != "" && !slices.Equal(deps, []string{want})) {
				t.Errorf("%s: C waits on %v, want %q", tt.name, deps, want)
			}
			if s.HostWait != (tt.gaps.HostUnseen == 1) {
				t.Errorf("%s: C host wait %v", tt.name, s.HostWait)
			}
		}
		g, err := Build(spans)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		checkReplay(t, g)
		if !slices.Contains(g.Kernels(), "A") {
			continue
		}
		// Only a wait on the host unseen keeps C where it was when A is
		// faster; a short gap follows A.
		faster, _ := g.Simulate(Faster("A", 50))
		if moved := faster != g.EndToEnd(); tt.name == "short" != moved {
			t.Errorf("%s: A 50%% faster gives %d, recorded %d", tt.name, faster, g.EndToEnd())
		}
	}
}

// FuzzInferIterations imports traces of GPU kernels on a few streams,
// drawn from the input (each 3 bytes: stream, kernel, duration and gap),
// repeated some times with a change or not, and checks that iterations and
// gaps give spans whose iterations each build a graph.
func FuzzInferIterations(f *testing.F) {
	f.Add([]byte{0, 0, 10, 1, 1, 3, 0, 2, 200}, uint8(5), false)
	f.Add([]byte{0, 0, 10, 0, 1, 3}, uint8(3), true)
	f.Add([]byte{2, 5, 255}, uint8(1), false)
	f.Fuzz(func(t *testing.T, block []byte, copies uint8, extra bool) {
		if len(block) > 150 || copies > 20 { // at most 1,000 spans: the smoke pass stays short
			return
		}
		var b strings.Builder
		b.WriteString(`{"traceEvents":[`)
		ts := map[byte]int{}
		now, n := 0, 0
		emit := func(st, k, d byte) {
			if n > 0 {
				b.WriteString(",")
			}
			n++
			start := max(now, ts[st%3]) + int(d>>4)*7
			dur := 1 + int(d&15)*13
			fmt.Fprintf(&b, `{"name":"k%d","cat":"kernel","ph":"X","pid":0,"tid":%d,"ts":%d,"dur":%d}`, k%5, st%3, start, dur)
			ts[st%3] = start + dur
			now = start
		}
		for range copies {
			for i := 0; i+2 < len(block); i += 3 {
				emit(block[i], block[i+1], block[i+2])
			}
		}
		if extra && len(block) >= 3 {
			emit(block[0], block[1]+1, block[2])
		}
		b.WriteString("]}")
		spans, rep, err := ImportChrome([]byte(b.String()), "p")
		if err != nil {
			if n == 0 {
				return
			}
			t.Fatalf("%v", err)
		}
		if err := Validate(spans); err != nil {
			t.Fatalf("spans do not validate: %v", err)
		}
		hostWaits := 0
		for _, s := range spans {
			if rep.IterationsFrom == FromRepeats && (s.Iteration < 0 || s.Iteration >= rep.Iterations) {
				t.Fatalf("span %d in iteration %d of %d", s.ID, s.Iteration, rep.Iterations)
			}
			if s.HostWait {
				hostWaits++
			}
		}
		if hostWaits != rep.Gaps.HostUnseen || rep.Gaps.Event+rep.Gaps.Host+rep.Gaps.HostUnseen > len(spans) {
			t.Fatalf("%d host waits, gaps %+v", hostWaits, rep.Gaps)
		}
		if rep.IterationsFrom == FromRepeats && copies >= 2 && !extra && rep.Iterations%int(copies) != 0 && rep.Iterations < int(copies) {
			t.Fatalf("%d copies gave %d iterations", copies, rep.Iterations)
		}
		for k, it := range Iterations(spans) {
			if _, err := Build(it); err != nil {
				t.Fatalf("iteration %d: %v", k, err)
			}
		}
	})
}

// TestRegion: a setup before the repeated stretch and a partial copy
// after it are left out.
func TestRegion(t *testing.T) {
	tests := []struct {
		seq     string
		a, p, c int
	}{
		{"abcabc", 0, 3, 2},
		{"xyabcabcabcab", 2, 3, 3},
		{"xaaaa", 1, 1, 4},
		{"abcd", 0, 0, 0},
		{"xababyyy", 1, 2, 2}, // "abab" covers 4, "yyy" 3
		{"xyyababz", 3, 2, 2}, // "yy" and "abab": abab covers more
	}
	for _, tt := range tests {
		a, p, c := region(strings.Split(tt.seq, ""))
		if a != tt.a || p != tt.p || c != tt.c {
			t.Errorf("region(%q) = %d, %d, %d, want %d, %d, %d", tt.seq, a, p, c, tt.a, tt.p, tt.c)
		}
	}
}

// TestRealTraceWithoutMarkers: the real PyTorch recording with its
// ProfilerStep#N events taken out. Its inter-op threads run different ops
// from step to step, so no sequence repeats: the import says it found no
// iterations, rather than inventing some.
func TestRealTraceWithoutMarkers(t *testing.T) {
	var evs []map[string]any
	if err := json.Unmarshal(readFixture(t, "torch_cpu_trace.json"), &evs); err != nil {
		t.Fatal(err)
	}
	evs = slices.DeleteFunc(evs, func(e map[string]any) bool {
		return strings.HasPrefix(fmt.Sprint(e["name"]), "ProfilerStep#")
	})
	data, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	spans, rep, err := ImportChrome(data, "p")
	if err != nil || rep.IterationsFrom != FromNone || rep.Warning == "" || len(spans) == 0 {
		t.Fatalf("%d spans, %+v, %v", len(spans), rep, err)
	}
}

var update = flag.Bool("update", false, "rewrite testdata/forkjoin_synthetic.json from causaltest.ForkJoin")

// TestForkJoinFixture: testdata/forkjoin_synthetic.json, the trace the
// docs import, is causaltest.ForkJoin's; -update rewrites it.
func TestForkJoinFixture(t *testing.T) {
	got := causaltest.Make(causaltest.ForkJoin()).JSON
	if *update {
		if err := os.WriteFile("testdata/forkjoin_synthetic.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := readFixture(t, "forkjoin_synthetic.json"); !bytes.Equal(got, want) {
		t.Error("testdata/forkjoin_synthetic.json is not causaltest.ForkJoin's trace; run go test ./causal -run TestForkJoinFixture -update")
	}
}
