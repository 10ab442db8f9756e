package fleet

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/daemon":         "the daemon depends on the fleet, not the reverse",
		"github.com/quasim/quasim/internal/store": "the fleet hands records to the daemon; it never writes the store",
		"go.etcd.io/bbolt":                        "the fleet never opens the store",
		"github.com/nats-io/nats-server/v2/...":   "nodes are clients; servers run apart (fleettest embeds them in tests)",
		"testing":                                 "no test code in production",
	})
}
