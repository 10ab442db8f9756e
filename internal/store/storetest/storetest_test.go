package storetest_test

import (
	"os"
	"testing"

	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

func TestNew(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	job := store.JobKey{Kernel: "sgemm", SpecHash: "h1", Problem: "64,64,64", Device: "cpu/test"}
	if _, err := s.AddTrials(job, []store.Trial{{Key: "1,2", Status: "ok", TimeMS: 1.5}}); err != nil {
		t.Fatalf("AddTrials: %v", err)
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("mode of %s = %v, want 0600", s.Path(), got)
	}
	if v, err := s.SchemaVersion(); err != nil || v < 1 {
		t.Errorf("SchemaVersion() = %d, %v, want >= 1", v, err)
	}
}
