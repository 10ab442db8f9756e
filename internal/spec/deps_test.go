package spec

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/daemon/...":         "spec is read by the daemon, not the other way round",
		"github.com/quasim/quasim/internal/store/...": "specs are stored by the daemon",
		"net/http":         "spec does no networking",
		"go.etcd.io/bbolt": "spec does no storage",
	})
}
