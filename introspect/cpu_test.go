package introspect

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

const cpuinfo = `processor	: 0
vendor_id	: AuthenticAMD
model name	: AMD EPYC 7B13 64-Core Processor
physical id	: 0
core id		: 0
cpu MHz		: 2450.000
flags		: fpu sse4_2 fma avx avx2

processor	: 1
vendor_id	: AuthenticAMD
model name	: AMD EPYC 7B13 64-Core Processor
physical id	: 0
core id		: 0
cpu MHz		: 2550.000
flags		: fpu sse4_2 fma avx avx2
`

func TestReadCPU(t *testing.T) {
	fsys := fstest.MapFS{
		"proc/cpuinfo": {Data: []byte(cpuinfo)},
		"sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq": {Data: []byte("3500000\n")},
		"sys/class/powercap/intel-rapl:0/energy_uj":            {Data: []byte("123456\n")},
		"sys/class/powercap/intel-rapl:0:0/energy_uj":          {Data: []byte("1\n")},
	}
	c, err := ReadCPU(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if c.Threads != 2 || c.Cores != 1 || c.Sockets != 1 || c.MHz != 2500 || c.MaxMHz != 3500 || c.Vendor != "AuthenticAMD" {
		t.Errorf("cpu = %+v", c)
	}
	if strings.Join(c.Features, ",") != "sse4_2,fma,avx,avx2" {
		t.Errorf("features %v", c.Features)
	}
	if got, want := c.Class(), "cpu/AMD EPYC 7B13 64-Core Processor/avx2/2c"; got != want {
		t.Errorf("class %q, want %q", got, want)
	}
	if c.Energy != "rapl: /sys/class/powercap/intel-rapl:0/energy_uj" {
		t.Errorf("energy %q", c.Energy)
	}
	delete(fsys, "sys/class/powercap/intel-rapl:0/energy_uj")
	delete(fsys, "sys/class/powercap/intel-rapl:0:0/energy_uj")
	fsys["sys/class/powercap/intel-rapl:0/name"] = &fstest.MapFile{Data: []byte("package-0")}
	if c, _ := ReadCPU(fsys); !strings.HasPrefix(c.Energy, "unavailable: ") {
		t.Errorf("energy without a readable counter: %q", c.Energy)
	}
	if _, err := ReadCPU(fstest.MapFS{}); err == nil {
		t.Error("no cpuinfo read without error")
	}
}

// On this machine: a class, and energy either a counter or unavailable.
func TestThisMachine(t *testing.T) {
	c, err := ReadCPU(os.DirFS("/"))
	if err != nil {
		t.Skipf("no /proc/cpuinfo here: %v", err)
	}
	t.Logf("%s; features %v; energy %s", c.Class(), c.Features, c.Energy)
	if c.Threads == 0 || !strings.HasPrefix(c.Class(), "cpu/") {
		t.Errorf("cpu %+v", c)
	}
	if !strings.HasPrefix(c.Energy, "rapl: ") && !strings.HasPrefix(c.Energy, "unavailable: ") {
		t.Errorf("energy %q", c.Energy)
	}
}

func FuzzReadCPU(f *testing.F) {
	f.Add([]byte(cpuinfo))
	f.Add([]byte("processor:\nflags: avx\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ReadCPU(fstest.MapFS{"proc/cpuinfo": {Data: data}})
		if err == nil && (c.Threads == 0 || !strings.HasPrefix(c.Class(), "cpu/")) {
			t.Fatalf("%+v", c)
		}
	})
}
