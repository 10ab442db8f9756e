package introspect

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestReadCaches(t *testing.T) {
	const d = "sys/devices/system/cpu/cpu0/cache/"
	fsys := fstest.MapFS{}
	for i, c := range [][4]string{{"1", "Data", "32K", "0,8"}, {"1", "Instruction", "32K", "0,8"}, {"2", "Unified", "512K", "0,8"}, {"3", "Unified", "32768K", "0-15"}} {
		for j, f := range []string{"level", "type", "size", "shared_cpu_list"} {
			fsys[d+"index"+string(rune('0'+i))+"/"+f] = &fstest.MapFile{Data: []byte(c[j] + "\n")}
		}
	}
	cs, err := ReadCaches(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []Cache{{"L1", 1, 32 << 10, 2}, {"L2", 2, 512 << 10, 2}, {"L3", 3, 32 << 20, 16}}
	if len(cs) != len(want) {
		t.Fatalf("ReadCaches = %+v, want %+v", cs, want)
	}
	for i := range want {
		if cs[i] != want[i] {
			t.Errorf("cache %d = %+v, want %+v", i, cs[i], want[i])
		}
	}
	fsys[d+"index2/size"] = &fstest.MapFile{Data: []byte("lots\n")}
	if _, err := ReadCaches(fsys); err == nil {
		t.Error("a bad size read without error")
	}
	if _, err := ReadCaches(fstest.MapFS{}); err == nil {
		t.Error("no sysfs read without error")
	}
}

// FuzzParseCache: any sysfs text parses or errs; what parses is sane.
func FuzzParseCache(f *testing.F) {
	f.Add("2", "Unified", "512K", "0-1,4")
	f.Add("1", "Instruction", "32K", "0")
	f.Add("3", "Data", "1G", "0-65535")
	f.Fuzz(func(t *testing.T, level, typ, size, shared string) {
		c, ok, err := parseCache(level, typ, size, shared)
		if err != nil || !ok {
			return
		}
		if c.Bytes <= 0 || c.SharedBy <= 0 || c.Level < 1 || c.Name == "" {
			t.Fatalf("parseCache(%q, %q, %q, %q) = %+v", level, typ, size, shared, c)
		}
	})
}

// Without cache directories the error names the absolute path, and the
// probe stands in with levels measured at set working sets.
func TestNoCachesProbe(t *testing.T) {
	_, err := ReadCaches(fstest.MapFS{})
	if err == nil || !strings.Contains(err.Error(), "open /sys/devices/system/cpu/cpu0/cache:") {
		t.Errorf("ReadCaches(empty) = %v, want the absolute path named", err)
	}
	p := ProbeCaches()
	if len(p) != 4 || p[0].Name != "≤32 KiB" || p[3].Name != "≤16 MiB" || p[3].Bytes != 16<<20 {
		t.Errorf("ProbeCaches() = %+v", p)
	}
	if got := levelBuffers(p, 2, 64<<20); len(got) != 4 || got[0].BufferBytes != 8<<10 {
		t.Errorf("probe buffers %+v, want 4 levels, the first of 8 KiB per thread", got)
	}
}
