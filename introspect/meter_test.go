package introspect

import (
	"io/fs"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/fstest"
)

// counterFS serves a RAPL tree whose package counter advances by step on
// every read, wrapping at max.
type counterFS struct {
	fstest.MapFS
	v, step, max uint64
	reads        atomic.Int64
}

func (c *counterFS) Open(name string) (fs.File, error) {
	if name == "sys/class/powercap/intel-rapl:0/energy_uj" {
		n := uint64(c.reads.Add(1) - 1)
		v := (c.v + n*c.step) % c.max
		m := fstest.MapFS{name: {Data: []byte(strconv.FormatUint(v, 10) + "\n")}}
		return m.Open(name)
	}
	return c.MapFS.Open(name)
}

func (c *counterFS) ReadFile(name string) ([]byte, error) {
	return fs.ReadFile(struct{ fs.FS }{c}, name)
}

func TestRAPL(t *testing.T) {
	fsys := &counterFS{MapFS: fstest.MapFS{
		"sys/class/powercap/intel-rapl:0/max_energy_range_uj":      {Data: []byte("1000000\n")},
		"sys/class/powercap/intel-rapl:0:0/energy_uj":              {Data: []byte("5\n")}, // a subzone: not summed
		"sys/class/powercap/intel-rapl:0/name":                     {Data: []byte("package-0\n")},
		"sys/class/powercap/intel-rapl:0/constraint_0_power_limit": {Data: []byte("1\n")},
	}, v: 990000, step: 25000, max: 1000000}
	r, err := NewRAPL(fsys)
	if err != nil {
		t.Fatal(err)
	}
	// NewRAPL read once (990000); Begin reads 15000 (wrapped), end 40000.
	w := r.Begin()()
	if w.EnergyMJ != 25 || w.Throttled() {
		t.Fatalf("window %+v, want 25 mJ", w)
	}
	if _, err := NewRAPL(fstest.MapFS{}); err == nil {
		t.Error("no powercap: no error")
	}
	// psys counts the platform, packages included: never summed with them.
	fsys.MapFS["sys/class/powercap/intel-rapl:1/name"] = &fstest.MapFile{Data: []byte("psys\n")}
	fsys.MapFS["sys/class/powercap/intel-rapl:1/energy_uj"] = &fstest.MapFile{Data: []byte("7\n")}
	if r, err := NewRAPL(fsys); err != nil {
		t.Errorf("with psys: %v", err)
	} else if len(r.zones) != 1 || r.zones[0] != "sys/class/powercap/intel-rapl:0" {
		t.Errorf("with psys: zones %v, want the package only", r.zones)
	}
}
