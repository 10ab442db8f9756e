package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quasim/quasim/internal/priors"
)

// priors build ranks a recording into a pack that show lists and
// --warm-from reads (as a file or in a directory); --source records the
// source's hash and must name a kernel that was recorded.
func TestPriorsBuild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := filepath.Join("..", "..", "..", "evaluate", "replay", "testdata", "small_cache.json")
	src := filepath.Join(dir, "k.cl")
	if err := os.WriteFile(src, []byte("__kernel void k() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pack := filepath.Join(dir, "small.qprior")
	if _, errs, code := run(t, "priors", "build", "-o", pack, "--source", "k="+src, rec); code != 0 {
		t.Fatalf("priors build: exit %d: %s", code, errs)
	}
	out, errs, code := run(t, "priors", "show", "--json", pack)
	if code != 0 {
		t.Fatalf("priors show: exit %d: %s", code, errs)
	}
	var p priors.Pack
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("__kernel void k() {}\n"))
	if len(p.Sources) != 1 || p.Sources[0].Kernel != "k" || p.Sources[0].Valid() == 0 || p.Sources[0].NumFailed() == 0 ||
		p.Sources[0].SourceSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("pack %+v", p)
	}
	if _, errs, code := run(t, "priors", "build", "-o", filepath.Join(dir, "x.qprior"), "--source", "other="+src, rec); code != 2 || !strings.Contains(errs, `no recording of kernel "other"`) {
		t.Errorf("--source of an unrecorded kernel: exit %d, %s", code, errs)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.qprior"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := run(t, "priors", "show", filepath.Join(dir, "bad.qprior")); code != 2 || !strings.Contains(errs, "bad.qprior: format") {
		t.Errorf("show of a bad pack: exit %d, %s", code, errs)
	}
	// The pack in a directory warms the same kernel's other recordings;
	// here none is on another device, so the run says it starts cold, and
	// the bad pack beside it is refused by name.
	_, errs, code = run(t, "bench", "--space", rec, "--strategy", "portfolio", "--budget", "5", "--seeds", "1", "--warm-from", dir)
	if code != 2 || !strings.Contains(errs, "bad.qprior") {
		t.Errorf("--warm-from a directory with a bad pack: exit %d, %s", code, errs)
	}
	os.Remove(filepath.Join(dir, "bad.qprior"))
	_, errs, code = run(t, "bench", "--space", rec, "--strategy", "portfolio", "--budget", "5", "--seeds", "1", "--warm-from", dir)
	if code != 0 || !strings.Contains(errs, "start cold") {
		t.Errorf("--warm-from a directory of packs: exit %d, %s", code, errs)
	}
}
