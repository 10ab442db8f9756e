package report

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
)

// TestRoofline: the jobs with known work stand under the measured roofs,
// the table gives each one's best GFLOP/s as fractions of the peaks and
// of the roof at its intensity, and without ceilings the section says why.
func TestRoofline(t *testing.T) {
	var b strings.Builder
	if err := Write(&b, fixture()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	i := strings.Index(page, `id="roofline"`)
	if i < 0 {
		t.Fatal("no roofline section")
	}
	sec := page[i:]
	sec = sec[:strings.Index(sec, "</section>")]
	if m := regexp.MustCompile(`data-series="(\d+)"`).FindStringSubmatch(sec); m == nil || m[1] != "7" {
		t.Errorf("roofline chart series %v, want 7 (two memory roofs, three cache levels, two jobs)", m)
	}
	if n := strings.Count(sec, "<td><a href="); n != 2 {
		t.Errorf("%d jobs in the roofline table, want 2 (the two with work and a valid trial)", n)
	}
	// sgemm 1024: 2^31 flops in 5 ms = 429.5 GFLOP/s, 0.859 of the
	// 500 GFLOP/s peak, 1.72 of the one-thread 250; intensity 2^31 /
	// (12 MiB) = 170.7 flop/byte, past the ridge (10), so compute bound;
	// its 12 MiB fit L3 (32 MiB), not L2.
	g := float64(2<<30) / 5e6
	for _, want := range []string{num(g), num(g / 500), num(g / 250), num(float64(2<<30) / float64(12<<20)), "compute", "12 MiB", "L3 (32 MiB), 100 GB/s"} {
		if !strings.Contains(sec, "<td>"+want+"</td>") {
			t.Errorf("roofline table lacks %q:\n%s", want, sec[strings.Index(sec, "<table"):])
		}
	}
	in := fixture()
	in.Ceilings = nil
	b.Reset()
	if err := Write(&b, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "No ceilings: the daemon has not measured") {
		t.Error("no honest empty state without ceilings")
	}
	// A damaged ceilings record (a zero bandwidth) draws no roof through
	// infinities either.
	in.Ceilings = &api.Ceilings{GFLOPS: 500, GFLOPSThread: 250}
	b.Reset()
	if err := Write(&b, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "No ceilings: the daemon has not measured") || strings.Contains(b.String(), "NaN") {
		t.Error("a zero bandwidth was drawn")
	}
}

// TestCausalSection: each pipeline's profile is a table with the
// estimates and their intervals, and a curve per kernel; a pipeline whose
// profile could not be fetched says why; none declared says what would
// fill the section.
func TestCausalSection(t *testing.T) {
	var b strings.Builder
	if err := Write(&b, fixture()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	sec := page[strings.Index(page, `id="causal"`):]
	sec = sec[:strings.Index(sec, "</section>")]
	for _, want := range []string{"fork-join", "20 iterations, 80 spans", "<td>conv2d</td><td>60%", "predicted 20%, measured 19%", "job sgemm has no ok trial yet", "No profile: synthetic: no spans."} {
		if !strings.Contains(sec, want) {
			t.Errorf("causal section lacks %q", want)
		}
	}
	if m := regexp.MustCompile(`data-series="(\d+)"`).FindStringSubmatch(sec); m == nil || m[1] != "2" {
		t.Errorf("curve chart series %v, want 2", m)
	}
	in := fixture()
	in.Pipelines, in.Causal = nil, nil
	b.Reset()
	if err := Write(&b, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "No pipelines declared") {
		t.Error("no empty state without pipelines")
	}
}

// TestMemPlanSection: a plan's peaks over the bound, its schedule's
// makespans over compute only and its misses per level are in the table;
// without plans the section says how to add one.
func TestMemPlanSection(t *testing.T) {
	var b strings.Builder
	if err := Write(&b, fixture()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	sec := page[strings.Index(page, `id="memplans"`):]
	sec = sec[:strings.Index(sec, "</section>")]
	for _, want := range []string{"synthetic graph", "<td>1.1</td><td>1.2</td><td>1</td><td>search</td><td>1.2</td><td>2</td>", "L1 40 of 500", "planned offline"} {
		if !strings.Contains(sec, want) {
			t.Errorf("memory plan section lacks %q:\n%s", want, sec)
		}
	}
	in := fixture()
	in.MemPlans = nil
	b.Reset()
	if err := Write(&b, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "quasimctl report --memgraph FILE adds") {
		t.Error("no empty state without plans")
	}
}

// TestRooflineLevels: a job stands against the roof of the smallest cache
// level its working set fits in, named; one that fits in none, against
// memory's. The crowded fixture's stencil 64² (32 KiB, 100 GFLOP/s at
// 0.625 flop/byte) passes the memory roof (31.25 GFLOP/s there) 3.2 times
// but is 0.4 of L1's (250).
func TestRooflineLevels(t *testing.T) {
	c := fixture().Ceilings
	tests := []struct {
		ws   float64
		want string
	}{
		{1, "L1"}, {32 << 10, "L1"}, {32<<10 + 1, "L2"}, {1 << 20, "L2"}, {12 << 20, "L3"}, {32<<20 + 1, "memory"},
	}
	for _, tt := range tests {
		if got := roofFor(c, tt.ws); got.name != tt.want {
			t.Errorf("roofFor(%v bytes) = %+v, want %s", tt.ws, got, tt.want)
		}
	}
	if got := roofFor(&api.Ceilings{BandwidthGBs: 50}, 1); got.name != "memory" || got.bw != 50 {
		t.Errorf("without levels: %+v, want memory", got)
	}
	page := render(t, crowdedFixture())
	sec := page[strings.Index(page, `id="roofline"`):]
	sec = sec[:strings.Index(sec, "</section>")]
	row := regexp.MustCompile(`<tr data-roof="L1">.*?stencil_2d_blocked_with_a_long_name 64,64.*?</tr>`).FindString(sec)
	if !strings.Contains(row, "<td>0.4</td><td>L1 bandwidth</td>") || !strings.Contains(row, "<td>32 KiB</td>") {
		t.Errorf("stencil 64,64 row: %q", row)
	}
	// The stencils run at 100 GFLOP/s at 0.625 flop/byte whatever their
	// size: those whose working set fits no cache pass the memory roof
	// (31.25 there), so they stand under the first faster roof that
	// bounds them, saying why.
	for _, want := range []string{`<tr data-roof="L2"><td><a href="#job-12">`, `its trials pass the memory roof its working set alone would give: data reused in L2`, `L1 roof, 400 GB/s (working set ≤ 32 KiB)`} {
		if !strings.Contains(sec, want) {
			t.Errorf("roofline lacks %q", want)
		}
	}
	in := crowdedFixture()
	in.Ceilings.Levels, in.Ceilings.LevelsNote = nil, "no cache level measured: caches: sysfs lists no data cache"
	if page := render(t, in); !strings.Contains(page, "No per-level roofs: no cache level measured: caches: sysfs lists no data cache.") {
		t.Error("without levels the roofline does not say why")
	}
}

// TestRooflineNeverAbove: no drawn point stands above the roof it is
// placed against, with cache levels and without (sysfs listing none):
// a job faster than its working set's roof moves to the first faster
// roof that bounds it, and trials above every roof are not drawn and are
// listed.
func TestRooflineNeverAbove(t *testing.T) {
	for _, levels := range []bool{true, false} {
		in := crowdedFixture()
		if !levels {
			in.Ceilings.Levels, in.Ceilings.LevelsNote = nil, "caches: sysfs lists no data cache"
		}
		// A sgemm trial above the 500 GFLOP/s peak: 2^31 flops in 2 ms.
		in.Kernels[0].Trials = append(in.Kernels[0].Trials, api.Trial{Key: "32,2,tiled", Status: "ok", TimeMS: 2, Problem: "1024", Device: "cpu/x", Cycle: 1})
		page := render(t, in)
		sec := page[strings.Index(page, `id="roofline"`):]
		sec = sec[:strings.Index(sec, "</section>")]
		if !strings.Contains(sec, "Not drawn, above every roof measured on this machine") || !strings.Contains(sec, "sgemm 1024: 1 of its trials (best 1074 GFLOP/s)") {
			t.Errorf("levels %v: the trial above the peak is not listed as not drawn", levels)
		}
		c := in.Ceilings
		rows := regexp.MustCompile(`<tr data-roof="([^"]+)"><td><a href="#[^"]+">[^<]*</a></td><td>([^<]+)</td><td>[^<]*</td><td>[^<]*</td><td>([^<]+)</td>`).FindAllStringSubmatch(sec, -1)
		if len(rows) < 8 {
			t.Fatalf("levels %v: %d roofline rows", levels, len(rows))
		}
		for _, m := range rows {
			bw := c.BandwidthGBs
			for _, l := range c.Levels {
				if l.Name == m[1] {
					bw = l.BandwidthGBs
				}
			}
			var in, g float64
			fmt.Sscan(m[2], &in)
			fmt.Sscan(m[3], &g)
			if roof := min(c.GFLOPS, bw*in); g > roof*1.01 { // num rounds to 3 digits
				t.Errorf("levels %v: a %s GFLOP/s point at intensity %s stands above its %s roof %v", levels, m[3], m[2], m[1], roof)
			}
		}
	}
}
