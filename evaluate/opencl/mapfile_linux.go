package opencl

import (
	"os"
	"syscall"
)

// mapFile returns path's content mapped read-only, never unmapped (a
// worker's problems live as long as it does). MAP_POPULATE maps the
// file's cached pages in one call: reading 40 MB into fresh memory
// instead cost 150 ms of page faults in this machine's VM, and a worker
// reads every argument before its first run. A file truncated while
// mapped faults the worker, which its evaluator reports as a crash.
func mapFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 || int64(int(st.Size())) != st.Size() || !st.Mode().IsRegular() {
		return os.ReadFile(path) // nothing to map, or not mappable
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return os.ReadFile(path)
	}
	return b, nil
}
