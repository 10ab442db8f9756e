package cli

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
)

func TestFleetTrustAdd(t *testing.T) {
	t.Parallel()
	pub := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)).Public().(ed25519.PublicKey)
	src := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.pub", certs.FormatPublicKey(pub)+"\n")
	tests := []struct {
		name, file string
		code       int
		errText    string
	}{
		{"public key", good, 0, ""},
		{"key id", write("id.pub", certs.KeyID(pub)), 1, "key id, not a public key"},
		{"garbage", write("bad.pub", "hello"), 1, "bad.pub"},
		{"missing", filepath.Join(src, "none.pub"), 1, "none.pub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "trust.d")
			out, errs, code := run(t, "fleet", "trust", "add", tt.file, "--trust-dir", dir)
			if code != tt.code || !strings.Contains(errs, tt.errText) {
				t.Fatalf("fleet trust add %s = exit %d, stderr %q; want %d, %q", tt.file, code, errs, tt.code, tt.errText)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*.pub"))
			if tt.code != 0 {
				if len(files) != 0 {
					t.Fatalf("a refused key left %v", files)
				}
				return
			}
			if !strings.Contains(out, certs.KeyID(pub)) || len(files) != 1 {
				t.Fatalf("out %q, files %v", out, files)
			}
			data, _ := os.ReadFile(files[0])
			if got, err := certs.ParsePublicKey(string(data)); err != nil || !got.Equal(pub) {
				t.Fatalf("trusted file holds %q (%v)", data, err)
			}
		})
	}
}

// fleet status says whether the view is live, or how old it is.
func TestFleetView(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		st   api.FleetStatus
		want string
	}{
		{"live", api.FleetStatus{Live: true, Synced: &at}, "live (in step with the fleet)"},
		{"never", api.FleetStatus{}, "never in step with the fleet"},
		{"old", api.FleetStatus{Synced: &at, ViewAgeS: 3725.4, Restored: 2}, "1h2m5s old (last in step " + at.Local().Format(time.RFC3339) + "); 2 records restored from the state file at start"},
	}
	for _, tt := range tests {
		if got := fleetView(tt.st); got != tt.want {
			t.Errorf("%s: fleetView = %q, want %q", tt.name, got, tt.want)
		}
	}
}
