package daemon

import (
	"context"
	"io/fs"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/quasim/quasim/introspect"
)

// raplFS is a RAPL package counter (µJ, wrapping at 1000) set by the test,
// counting its reads.
type raplFS struct {
	v     atomic.Uint64
	reads atomic.Int64
}

func (r *raplFS) Open(name string) (fs.File, error) {
	m := fstest.MapFS{
		"sys/class/powercap/intel-rapl:0/name":                {Data: []byte("package-0\n")},
		"sys/class/powercap/intel-rapl:0/max_energy_range_uj": {Data: []byte("1000\n")},
	}
	if name == "sys/class/powercap/intel-rapl:0/energy_uj" {
		r.reads.Add(1)
		m[name] = &fstest.MapFile{Data: []byte(strconv.FormatUint(r.v.Load(), 10) + "\n")}
	}
	return m.Open(name)
}

// The CPU energy total keeps counting between scrapes: read often enough,
// a counter that wraps twice loses nothing.
func TestCPUEnergyBetweenScrapes(t *testing.T) {
	fsys := &raplFS{}
	rapl, err := introspect.NewRAPL(fsys)
	if err != nil {
		t.Fatal(err)
	}
	c := newDeviceCollector(nil, rapl, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.run(ctx, 1)
	for _, v := range []uint64{600, 200, 800, 400} { // +600 µJ each, wrapping at 1000
		fsys.v.Store(v)
		n := fsys.reads.Load()
		for fsys.reads.Load() < n+2 { // a read of the new value
			runtime.Gosched()
		}
	}
	cancel()
	if mj, ok := c.cpuEnergy(); !ok || mj < 2.4-1e-9 || mj > 2.4+1e-9 {
		t.Errorf("CPU energy %v mJ (%v), want 2.4", mj, ok)
	}
}
