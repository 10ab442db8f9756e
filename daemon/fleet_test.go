package daemon

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestFleetConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  FleetConfig
		want string // in the error; "" for none
	}{
		{"no fleet", FleetConfig{}, ""},
		{"fleet", FleetConfig{URLs: []string{"nats://10.0.0.1:4222", "tls://h:4222"}, Name: "gpu-a100"}, ""},
		{"name without servers", FleetConfig{Name: "x"}, "needs --fleet"},
		{"servers without name", FleetConfig{URLs: []string{"nats://h:4222"}}, "fleet-name: required"},
		{"bad name", FleetConfig{URLs: []string{"nats://h:4222"}, Name: "a.b"}, "fleet-name"},
		{"bad url", FleetConfig{URLs: []string{"http://h:4222"}, Name: "x"}, `fleet "http://h:4222"`},
		{"no host", FleetConfig{URLs: []string{"nats://"}, Name: "x"}, `fleet "nats://"`},
		{"negative wait", FleetConfig{URLs: []string{"nats://h:4222"}, Name: "x", Wait: -time.Second}, "fleet-wait"},
		{"replicas", FleetConfig{URLs: []string{"nats://h:4222"}, Name: "x", Replicas: 7}, "fleet-replicas 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.validate()
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("validate(%+v) = %v, want %q", tt.cfg, err, tt.want)
			}
		})
	}
}

// No fleet configured: no fleet node, so nothing connects anywhere. A
// trust key that is not a key stops the start, naming its file.
func TestNewFleetNode(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	if f, err := newFleetNode(FleetConfig{}, key, nil, nil, zerolog.Nop()); f != nil || err != nil {
		t.Fatalf("newFleetNode without servers = %v, %v; want nil, nil", f, err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pub")
	os.WriteFile(bad, []byte("not a key"), 0o644)
	_, err := newFleetNode(FleetConfig{URLs: []string{"nats://127.0.0.1:1"}, Name: "x", TrustDir: dir}, key, nil, nil, zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("newFleetNode with %s = %v, want an error naming it", bad, err)
	}
}
