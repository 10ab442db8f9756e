package daemon

import (
	"testing"

	"github.com/quasim/quasim/internal/store"
)

// After a reload the lookup index holds nothing of the jobs and kernels
// that went: entries are keyed by spec version, so nothing else drops them.
func TestIndexRetain(t *testing.T) {
	kept := store.JobKey{Kernel: "a", SpecHash: "h2", Problem: "8", Device: "cpu"}
	gone := store.JobKey{Kernel: "a", SpecHash: "h1", Problem: "8", Device: "cpu"}
	x := lookupIndex{
		entries: map[store.JobKey]*servedEntry{kept: notServed, gone: notServed},
		kernels: map[string]*kernelIndex{"a": {}, "b": {}},
	}
	x.retain(map[string]*job{kept.String(): {key: kept}}, map[string]*kernel{"a": {}})
	if len(x.entries) != 1 || x.entries[kept] == nil {
		t.Errorf("entries after retain = %v, want only %s", x.entries, kept)
	}
	if len(x.kernels) != 1 || x.kernels["a"] == nil {
		t.Errorf("kernels after retain = %v, want only a", x.kernels)
	}
}
