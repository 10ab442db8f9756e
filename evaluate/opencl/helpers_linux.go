package opencl

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

const helpersWork = true

// helperAttr puts a helper in a process group of its own, which the
// worker stops and continues as one (pocl may run the linker as its
// child), and kills it with the worker, however the worker ends.
func helperAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// selfExe is the worker's own binary, even if its file was replaced since.
func selfExe() (string, error) { return "/proc/self/exe", nil }

// waitStopped waits, up to 100 ms, until every thread of process pid is
// stopped or gone: a SIGSTOP takes effect as each is next scheduled.
func waitStopped(pid int) {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/stat")
	for range 500 {
		stopped := true
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				continue // gone
			}
			// The state follows the command name, which ends at the last ')'.
			if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && !bytes.ContainsRune([]byte("TtZX"), rune(b[i+2])) {
				stopped = false
				break
			}
		}
		if stopped {
			return
		}
		time.Sleep(200 * time.Microsecond)
	}
}
