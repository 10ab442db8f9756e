package introspect

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// CPUTimes is a snapshot of the machine's CPU time and of the time used by
// one process tree, in clock ticks (USER_HZ), from /proc.
type CPUTimes struct {
	Total uint64 // all CPUs, every state
	Idle  uint64 // idle and iowait
	Own   uint64 // user+system of the process tree, children reaped included
}

// ReadCPUTimes reads /proc/stat and the stat file of pid and of each of its
// descendants from fsys, the root of the file system. The tree's own time
// is what Load leaves out: a harness the daemon runs is not "another
// process". A process that exits between two snapshots leaves its ticks
// counted as others'.
func ReadCPUTimes(fsys fs.FS, pid int) (CPUTimes, error) {
	var t CPUTimes
	data, err := fs.ReadFile(fsys, "proc/stat")
	if err != nil {
		return t, fmt.Errorf("cpu load: %w", err)
	}
	if t.Total, t.Idle, err = parseProcStat(data); err != nil {
		return t, fmt.Errorf("cpu load: proc/stat: %w", err)
	}
	procs, err := readProcs(fsys)
	if err != nil {
		return t, fmt.Errorf("cpu load: %w", err)
	}
	if _, ok := procs[pid]; !ok {
		return t, fmt.Errorf("cpu load: proc/%d/stat: not found", pid)
	}
	for p, pr := range procs {
		if descends(procs, p, pid) {
			t.Own += pr.ticks
		}
	}
	return t, nil
}

// Load is the share of all CPUs that processes outside the tree used
// between two snapshots, from 0 to 1.
func Load(a, b CPUTimes) float64 {
	if b.Total <= a.Total {
		return 0
	}
	total := float64(b.Total - a.Total)
	busy := total - float64(sub(b.Idle, a.Idle)) - float64(sub(b.Own, a.Own))
	return min(max(busy/total, 0), 1)
}

func sub(b, a uint64) uint64 {
	if b < a {
		return 0
	}
	return b - a
}

// parseProcStat sums the aggregate "cpu" line of /proc/stat.
func parseProcStat(data []byte) (total, idle uint64, err error) {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, errors.New(`first line is not the aggregate "cpu" line`)
	}
	// user nice system idle iowait irq softirq steal [guest guest_nice]:
	// guest time is already counted in user, so it is left out.
	for i, s := range f[1:min(len(f), 9)] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("cpu field %d: %q is not a tick count", i+1, s)
		}
		total += v
		if i == 3 || i == 4 {
			idle += v
		}
	}
	return total, idle, nil
}

// parsePidStat returns the parent pid and the user+system ticks of the
// process and its reaped children from /proc/<pid>/stat. The command name
// may hold spaces and parentheses, so fields count from the last ')'.
func parsePidStat(data []byte) (ppid int, ticks uint64, err error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, errors.New("no command name")
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state); ppid is field 4, utime..cstime 14..17.
	if len(f) < 15 {
		return 0, 0, fmt.Errorf("%d fields after the command name, want at least 15", len(f))
	}
	if ppid, err = strconv.Atoi(f[1]); err != nil {
		return 0, 0, fmt.Errorf("ppid %q: %w", f[1], err)
	}
	for _, s := range f[11:15] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("cpu time %q: %w", s, err)
		}
		if v > 0 {
			ticks += uint64(v)
		}
	}
	return ppid, ticks, nil
}

// proc is what one /proc/<pid>/stat says that Load and Tree need.
type proc struct {
	ppid  int
	ticks uint64
}

// readProcs reads the stat file of every process under proc in fsys; a
// process that exits meanwhile is left out.
func readProcs(fsys fs.FS) (map[int]proc, error) {
	ents, err := fs.ReadDir(fsys, "proc")
	if err != nil {
		return nil, err
	}
	out := map[int]proc{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p <= 0 {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join("proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if pp, tk, err := parsePidStat(data); err == nil {
			out[p] = proc{ppid: pp, ticks: tk}
		}
	}
	return out, nil
}

// descends reports whether p is pid or one of its descendants.
func descends(procs map[int]proc, p, pid int) bool {
	for q, hops := p, 0; q > 0 && hops < 64; q, hops = procs[q].ppid, hops+1 {
		if q == pid {
			return true
		}
	}
	return false
}

// Tree returns pid and its descendants, from the stat files under proc in
// fsys (the root of the file system).
func Tree(fsys fs.FS, pid int) map[int]bool {
	procs, _ := readProcs(fsys)
	out := map[int]bool{pid: true}
	for p := range procs {
		if descends(procs, p, pid) {
			out[p] = true
		}
	}
	return out
}
