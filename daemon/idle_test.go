package daemon

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestIdleGateBusy(t *testing.T) {
	g := &idleGate{cpuMax: 0.5, gpuMax: 10, ready: true, load: 0.2,
		gpus: func(class string) (float64, []uint32, bool) {
			switch class {
			case "nvidia/busy":
				return 85, []uint32{4242}, true
			case "nvidia/ours":
				return 99, nil, true // only quasimd's own processes on it
			}
			return 0, nil, false
		}}
	for _, tc := range []struct{ dev, want string }{
		{"cpu/x/avx2/2c", ""},
		{"nvidia/busy", "GPU utilisation 85% above 10% with other processes on it (pids [4242])"},
		{"nvidia/ours", ""},
		{"nvidia/unknown", ""},
	} {
		if got := g.busy(tc.dev); got != tc.want {
			t.Errorf("busy(%s) = %q, want %q", tc.dev, got, tc.want)
		}
	}
	g.load = 0.7
	if got := g.busy("nvidia/ours"); !strings.Contains(got, "CPU load of other processes 0.70 above 0.50") {
		t.Errorf("busy CPU: %q", got)
	}
	if load, ok := g.current(); !ok || load != 0.7 {
		t.Errorf("current = %v, %v", load, ok)
	}
	off := &idleGate{}
	if got := off.busy("cpu/x"); got != "" {
		t.Errorf("gate off: %q", got)
	}
}

// flakyFS fails reads of /proc/stat while broken is set.
type flakyFS struct {
	fs.FS
	broken *atomic.Bool
}

func (f flakyFS) Open(name string) (fs.File, error) {
	if name == "proc/stat" && f.broken.Load() {
		return nil, errors.New("flaky: unreadable")
	}
	return f.FS.Open(name)
}

// A load that cannot be read turns the CPU gate off only while it cannot.
func TestIdleGateRecovers(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc here")
	}
	var broken atomic.Bool
	broken.Store(true)
	g := &idleGate{cpuMax: 0.5, fsys: flakyFS{os.DirFS("/"), &broken}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go g.run(ctx, 10*time.Millisecond)
	wait := func(want bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for _, ok := g.current(); ok != want; _, ok = g.current() {
			if time.Now().After(deadline) {
				t.Fatalf("load readable: %v, want %v", ok, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	time.Sleep(50 * time.Millisecond)
	wait(false)
	broken.Store(false)
	wait(true)
	broken.Store(true)
	wait(false)
	broken.Store(false)
	wait(true)
}
