package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

// Who asked for a job is kept with it, registers it and
// is never overwritten; the restart is in cmd/quasimd TestTuneOnMissBounded.
func TestRequester(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	if _, ok, err := s.Requester(jobA); err != nil || ok {
		t.Fatalf("Requester of an unknown job = %v, %v; want none", ok, err)
	}
	at := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	want := store.Requester{UID: 65534, User: "nobody", At: at}
	if err := s.SetRequester(jobA, want); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRequester(jobA, store.Requester{UID: 0, User: "root", At: at.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Requester(jobA)
	if err != nil || !ok || got != want {
		t.Errorf("Requester = %+v, %v, %v; want the first one, %+v", got, ok, err, want)
	}
	if jobs, err := s.Jobs(); err != nil || !slices.Contains(jobs, jobA) {
		t.Errorf("Jobs = %v, %v; want the requested job registered", jobs, err)
	}
	// A job registered by other records has no requester until one is set.
	if _, err := s.AddTrials(jobB, []store.Trial{{Key: "1", Status: "ok", TimeMS: 1, At: at}}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Requester(jobB); err != nil || ok {
		t.Errorf("Requester of a spec's job = %v, %v; want none", ok, err)
	}
}

// The prior a job was warm-started from is kept with it, beside its
// requester, and never overwritten.
func TestPrior(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	if _, ok, err := s.Prior(jobA); err != nil || ok {
		t.Fatalf("Prior of an unknown job = %v, %v; want none", ok, err)
	}
	at := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	want := store.Prior{From: "pack", Sources: []string{"conv_A4000", "conv_A6000"}, Ranked: 4000, At: at}
	if err := s.SetRequester(jobA, store.Requester{UID: 7, At: at}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []store.Prior{want, {From: "fleet", At: at.Add(time.Hour)}} {
		if err := s.SetPrior(jobA, p); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := s.Prior(jobA)
	if err != nil || !ok || got.From != want.From || !slices.Equal(got.Sources, want.Sources) || got.Ranked != want.Ranked || !got.At.Equal(at) {
		t.Errorf("Prior = %+v, %v, %v; want the first one, %+v", got, ok, err, want)
	}
	if r, ok, err := s.Requester(jobA); err != nil || !ok || r.UID != 7 {
		t.Errorf("Requester after SetPrior = %+v, %v, %v", r, ok, err)
	}
}
