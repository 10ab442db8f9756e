package daemon

import (
	"strings"
	"testing"
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
