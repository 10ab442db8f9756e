package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadDir(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"a.yaml":      "name: a\nevaluator: builtin:sgemm\n",
		"b.yml":       "name: b\nevaluator: builtin:reduce\nschedule: every day\n",
		"c.json":      `{"name": "c", "evaluator": "builtin:conv2d"}`,
		"d.YAML":      "name: d\nevaluator: builtin:reduce\n",
		".e.yaml":     "not: [a spec",
		"README.md":   "# not a spec",
		"f.yaml.orig": "name: [",
	})
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	specs, errs := LoadDir(dir)
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
		if want := filepath.Join(dir, s.Name); !strings.HasPrefix(s.Source, want+".") {
			t.Errorf("spec %s: Source %q, want %s.*", s.Name, s.Source, want)
		}
	}
	if got, want := strings.Join(names, " "), "a c d"; got != want {
		t.Errorf("LoadDir names = %q, want %q", got, want)
	}
	if len(errs) != 1 {
		t.Fatalf("LoadDir errors = %v, want one for b.yml", errs)
	}
	if msg := errs[0].Error(); !strings.HasPrefix(msg, filepath.Join(dir, "b.yml")+": schedule") {
		t.Errorf("LoadDir error = %q, want it to name b.yml and schedule", msg)
	}
}

func TestLoadDirDuplicate(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"a.yaml": "name: k\nevaluator: builtin:sgemm\n",
		"b.json": `{"name": "k", "evaluator": "builtin:reduce"}`,
	})
	specs, errs := LoadDir(dir)
	if len(specs) != 1 || specs[0].Evaluator != "builtin:sgemm" {
		t.Errorf("LoadDir specs = %v, want only a.yaml's", specs)
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrDuplicate) {
		t.Fatalf("LoadDir errors = %v, want one duplicate", errs)
	}
	msg := errs[0].Error()
	for _, w := range []string{filepath.Join(dir, "b.json") + `: name "k" already defined in ` + filepath.Join(dir, "a.yaml")} {
		if !strings.Contains(msg, w) {
			t.Errorf("LoadDir error = %q, want it to contain %q", msg, w)
		}
	}
}

func TestLoadDirMissingOrEmpty(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{filepath.Join(t.TempDir(), "absent"), t.TempDir()} {
		specs, errs := LoadDir(dir)
		if specs != nil || errs != nil {
			t.Errorf("LoadDir(%q) = %v, %v; want nil, nil", dir, specs, errs)
		}
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs := LoadDir(file); len(errs) != 1 {
		t.Errorf("LoadDir(a file) errors = %v, want one", errs)
	}
}
