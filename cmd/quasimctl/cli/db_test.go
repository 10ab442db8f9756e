package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDBWithoutQuasimd: quasimctl db needs quasimd; without one beside it
// or on $PATH it says so and fails.
func TestDBWithoutQuasimd(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"db", "check"}, &out, &errb)
	if code != exitError || !strings.Contains(errb.String(), "quasimd not found") {
		t.Errorf("quasimctl db check without quasimd: exit %d, %q", code, errb.String())
	}
}
