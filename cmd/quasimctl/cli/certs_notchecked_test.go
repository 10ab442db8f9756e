package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quasim/quasim/certs"
)

// certs verify shows a check that was not made as NOT CHECKED with why, and
// does not count it as passed; a re-indented file still verifies.
func TestCertsVerifyNotChecked(t *testing.T) {
	t.Parallel()
	fx := newCertFixture(t)
	c := *fx.good
	c.Checks = append(c.Checks, certs.Check{Name: "error_bound", NotChecked: "an exec harness reports a checksum, not its outputs"})
	if err := certs.Sign(&c, fx.priv); err != nil {
		t.Fatal(err)
	}
	body, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cert.json")
	if err := os.WriteFile(file, append(indented.Bytes(), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCtx(context.Background(), "--socket", tempSocket(t), "certs", "verify", "--file", file, "--pubkey", fx.pubkey)
	if code != 0 {
		t.Fatalf("certs verify = %d, want 0 (stderr %q)", code, errs)
	}
	for _, want := range []string{
		"certificate: PASS (2 of 2 checks made passed; 1 not made)\n",
		"  NOT CHECKED error_bound\n    not made: an exec harness reports a checksum, not its outputs\n",
		"signature OK, id OK\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("certs verify printed\n%s\nwant it to contain %q", out, want)
		}
	}
}
