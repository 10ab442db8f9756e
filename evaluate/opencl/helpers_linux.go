package opencl

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

const helpersWork = true

// helperAttr kills a helper with the worker, however the worker ends.
func helperAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// waitStopped waits, up to 100 ms, until process pid is stopped or gone:
// a SIGSTOP is delivered when the process is next scheduled.
func waitStopped(pid int) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	for range 500 {
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		// The state follows the command name, which ends at the last ')'.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
			switch b[i+2] {
			case 'T', 't', 'Z', 'X':
				return
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
}
