package introspect

import (
	"math"
	"os"
	"testing"
	"testing/fstest"
)

func procFS(stat string, pids map[string]string) fstest.MapFS {
	m := fstest.MapFS{"proc/stat": {Data: []byte(stat)}}
	for p, s := range pids {
		m["proc/"+p+"/stat"] = &fstest.MapFile{Data: []byte(s)}
	}
	return m
}

// pidStat is a /proc/<pid>/stat line with the given parent and times.
func pidStat(pid, comm, ppid, utime, stime, cutime, cstime string) string {
	return pid + " (" + comm + ") S " + ppid + " 1 1 0 -1 4194304 100 0 0 0 " + utime + " " + stime + " " + cutime + " " + cstime + " 20 0 1 0 100 1000 10\n"
}

func TestLoadCountsOthersOnly(t *testing.T) {
	before := procFS("cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 1 2 3 4\n", map[string]string{
		"1":  pidStat("1", "init", "0", "5", "5", "0", "0"),
		"10": pidStat("10", "quasimd", "1", "50", "10", "0", "0"),
		"11": pidStat("11", "harness (x) y", "10", "20", "0", "0", "0"),
		"12": pidStat("12", "nvcc", "11", "0", "0", "0", "0"),
		"20": pidStat("20", "spin", "1", "0", "0", "0", "0"),
	})
	after := procFS("cpu  400 0 200 900 100 0 0 0 50 0\n", map[string]string{
		"1":  pidStat("1", "init", "0", "5", "5", "0", "0"),
		"10": pidStat("10", "quasimd", "1", "60", "10", "0", "0"),
		"11": pidStat("11", "harness (x) y", "10", "60", "0", "0", "0"),
		"12": pidStat("12", "nvcc", "11", "50", "0", "0", "0"),
		"20": pidStat("20", "spin", "1", "200", "0", "0", "0"),
	})
	a, err := ReadCPUTimes(before, 10)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadCPUTimes(after, 10)
	if err != nil {
		t.Fatal(err)
	}
	if a.Total != 1000 || a.Idle != 800 || a.Own != 80 {
		t.Fatalf("before = %+v", a)
	}
	// 600 ticks passed, 200 idle; the tree used 100 of the 400 busy.
	if got := Load(a, b); math.Abs(got-0.5) > 1e-9 {
		t.Fatalf("Load = %v, want 0.5", got)
	}
	if got := Load(b, a); got != 0 {
		t.Fatalf("Load backwards = %v, want 0", got)
	}
	if tree := Tree(after, 10); len(tree) != 3 || !tree[10] || !tree[11] || !tree[12] {
		t.Errorf("Tree(10) = %v, want 10, 11, 12", tree)
	}
	if _, err := ReadCPUTimes(before, 99); err == nil {
		t.Fatal("missing pid: no error")
	}
	if _, err := ReadCPUTimes(procFS("intr 1 2\n", nil), 1); err == nil {
		t.Fatal("bad proc/stat: no error")
	}
}

func TestReadCPUTimesHere(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc here")
	}
	a, err := ReadCPUTimes(os.DirFS("/"), os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if a.Total == 0 || a.Idle > a.Total {
		t.Fatalf("%+v", a)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("cpu  1 2 3 4 5 6 7 8 9 10\n"))
	f.Add([]byte(pidStat("1", "a) b", "0", "1", "2", "3", "-4")))
	f.Add([]byte("cpu 1 2 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if total, idle, err := parseProcStat(data); err == nil && idle > total {
			t.Fatalf("idle %d > total %d", idle, total)
		}
		parsePidStat(data)
	})
}
