package storetest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/quasim/quasim/internal/store"
)

// New opens a fresh store in t.TempDir(). When the test ends it runs the
// store's consistency check, failing t on any problem, and closes it.
func New(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.Open(filepath.Join(t.TempDir(), "quasim.db"), store.Options{LockTimeout: time.Second})
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Check(); err != nil {
			t.Errorf("storetest: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("storetest: %v", err)
		}
	})
	return s
}
