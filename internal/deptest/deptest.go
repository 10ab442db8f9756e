package deptest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// BadDeps maps an import path (or a path prefix ending in "/...") to the
// reason the package under test must not depend on it.
type BadDeps map[string]string

// Check fails t if the package in the current directory depends, directly
// or not, on any of bad. Test-only imports are not counted.
func Check(t *testing.T, bad BadDeps) {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkg struct {
		ImportPath string
		Deps       []string
	}
	if err := json.Unmarshal(out, &pkg); err != nil {
		t.Fatalf("go list output: %v", err)
	}
	if len(pkg.Deps) == 0 {
		t.Fatalf("go list gave no dependencies for %s", pkg.ImportPath)
	}
	for _, d := range pkg.Deps {
		for b, why := range bad {
			if d == b || (strings.HasSuffix(b, "/...") && strings.HasPrefix(d, strings.TrimSuffix(b, "..."))) {
				t.Errorf("%s depends on %s: %s", pkg.ImportPath, d, why)
			}
		}
	}
}
