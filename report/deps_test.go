package report

import (
	"testing"

	"github.com/quasim/quasim/internal/deptest"
)

// The report draws only what the API carries.
func TestDeps(t *testing.T) {
	deptest.Check(t, deptest.BadDeps{
		"github.com/quasim/quasim/client":       "the report is given its data; quasimctl fetches it",
		"github.com/quasim/quasim/daemon":       "the report reads the daemon only through the API types",
		"github.com/quasim/quasim/internal/...": "the report reads the store only through the API types",
		"github.com/quasim/quasim/certs":        "certificates arrive decoded by the caller",
		"github.com/quasim/quasim/genome":       "the report reads config keys as the API gives them",
		"go.etcd.io/bbolt":                      "the report never opens the store",
		"testing":                               "no test code in production binaries",
	})
}
