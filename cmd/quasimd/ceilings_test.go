package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/testload"
)

// TestCeilings: a daemon measures the CPU's roofline ceilings once, shows
// them in quasimctl devices, keeps them in the state directory (a restart
// does not measure again), and the builtin jobs carry their work.
func TestCeilings(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("measures the CPU's FMA rate and copy bandwidth for about a second")
	}
	dir := newDir(t, map[string]string{"reduce.yaml": reduceSpec})
	d := start(t, dir, "--no-ceilings=false")
	var devs api.Devices
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for d.ctlJSON(&devs, "devices"); devs.CPU.Ceilings == nil; d.ctlJSON(&devs, "devices") {
		if time.Now().After(deadline) {
			t.Fatal("no ceilings measured in 60 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	c := devs.CPU.Ceilings
	if c.GFLOPS <= 0 || c.BandwidthGBs <= 0 || c.Threads != devs.CPU.Threads || c.How == "" || (len(c.Levels) == 0 && c.LevelsNote == "") {
		t.Fatalf("ceilings %+v", c)
	}
	for _, l := range c.Levels {
		if l.BandwidthGBs <= 0 || l.Bytes <= 0 || l.BufferBytes <= 0 {
			t.Errorf("level %+v", l)
		}
	}
	out, _, code := d.ctl("devices")
	if code != 0 || !strings.Contains(out, "fma peak:") || !strings.Contains(out, "GB/s") {
		t.Fatalf("devices does not show the ceilings: exit %d\n%s", code, out)
	}
	t.Logf("\n%s", out)

	var ks []api.Kernel
	d.ctlJSON(&ks, "kernels")
	if len(ks) == 0 || len(ks[0].Jobs) == 0 || ks[0].Jobs[0].Work == nil {
		t.Fatalf("no work on the builtin job: %+v", ks)
	}
	if w := ks[0].Jobs[0].Work; w.Bytes != 4*float64(65536+1) || w.Flops != 65535 {
		t.Errorf("reduce n=65536 work %+v, want 65535 flops and 4*(65536+1) bytes", w)
	}
	d.stop()

	b, err := os.ReadFile(filepath.Join(dir, "state", "ceilings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]api.Ceilings
	if err := json.Unmarshal(b, &rec); err != nil || rec[devs.CPU.Class].MeasuredAt != c.MeasuredAt {
		t.Fatalf("ceilings.json %s: %v", b, err)
	}
	d = start(t, dir, "--no-ceilings=false")
	d.ctlJSON(&devs, "devices")
	if devs.CPU.Ceilings == nil || !devs.CPU.Ceilings.MeasuredAt.Equal(c.MeasuredAt) {
		t.Fatalf("after a restart: %+v, want the recorded %+v", devs.CPU.Ceilings, c)
	}
}
