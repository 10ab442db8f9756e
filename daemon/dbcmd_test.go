package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// db reads the service's state file when the user has none of their own
// and asked for none; before, it looked in the user's home and found
// nothing while quasimctl talked to the service.
func TestDBFile(t *testing.T) {
	dir := t.TempDir()
	own, service := filepath.Join(dir, "own", StateFile), filepath.Join(dir, "service", StateFile)
	for _, p := range []string{service} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
	}
	if p, note := dbFile(own, service, false); p != service || !strings.Contains(note, "reading the service's") {
		t.Errorf("no file of one's own: %s %q, want the service's", p, note)
	}
	if p, _ := dbFile(own, service, true); p != own {
		t.Errorf("asked for one's own: %s, want it", p)
	}
	os.MkdirAll(filepath.Dir(own), 0o755)
	os.WriteFile(own, nil, 0o644)
	if p, note := dbFile(own, service, false); p != own || note != "" {
		t.Errorf("a file of one's own: %s %q, want it", p, note)
	}
}
