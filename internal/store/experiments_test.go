package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/quasim/quasim/internal/store"
)

func TestExperiments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	s := openPath(t, path, store.Options{})
	got, err := s.Experiments("builtin", 0)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v, %v", got, err)
	}
	for i := 1; i <= store.ExperimentsKept+3; i++ {
		ex, err := s.NewExperiment(store.Experiment{Pipeline: "builtin", At: at(i), Report: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
		if err != nil {
			t.Fatal(err)
		}
		if ex.ID != i {
			t.Fatalf("id %d, want %d", ex.ID, i)
		}
	}
	if _, err := s.NewExperiment(store.Experiment{Pipeline: "other", At: at(1), Report: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	got, err = s.Experiments("builtin", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != store.ExperimentsKept || got[0].ID != store.ExperimentsKept+3 || got[len(got)-1].ID != 4 {
		t.Fatalf("kept %d, newest %d, oldest %d", len(got), got[0].ID, got[len(got)-1].ID)
	}
	if string(got[0].Report) != fmt.Sprintf(`{"n":%d}`, store.ExperimentsKept+3) || !got[0].At.Equal(at(store.ExperimentsKept+3)) {
		t.Fatalf("newest %+v", got[0])
	}
	if got, _ := s.Experiments("builtin", 2); len(got) != 2 {
		t.Fatalf("limit 2: %d", len(got))
	}

	// Bad input is refused whole.
	for _, ex := range []store.Experiment{
		{Pipeline: "", Report: json.RawMessage(`{}`)},
		{Pipeline: "builtin", Report: json.RawMessage(`[1]`)},
		{Pipeline: "builtin", Report: json.RawMessage(`null`)},
		{Pipeline: "builtin"},
	} {
		if _, err := s.NewExperiment(ex); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", ex, err)
		}
	}
	if got, _ := s.Experiments("builtin", 0); len(got) != store.ExperimentsKept {
		t.Fatalf("a refused experiment changed the list: %d", len(got))
	}
}

// A corrupt experiment is skipped and reported; the others still list.
func TestExperimentCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	s, err := store.Open(path, store.Options{})
	must(t, err)
	for i := range 3 {
		if _, err := s.NewExperiment(store.Experiment{Pipeline: "p", At: at(i), Report: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	must(t, s.Close())
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("v1")).Bucket([]byte("experiments")).Bucket([]byte("p"))
		return b.Put([]byte{0, 0, 0, 0, 0, 0, 0, 2}, []byte(`{"v":1,"id":2,"report":"x"}`))
	})
	var reported []store.Corruption
	s = openPath(t, path, store.Options{OnCorrupt: func(c store.Corruption) { reported = append(reported, c) }})
	if rep := s.CheckReport(); rep == nil || rep.Damaged() || len(rep.Corrupt) != 1 || rep.Corrupt[0].Bucket != "experiments" {
		t.Fatalf("check of Open = %+v, want the corrupt experiment", rep)
	}
	got, err := s.Experiments("p", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != 3 || got[1].ID != 1 {
		t.Fatalf("got %+v", got)
	}
	if len(reported) != 1 || reported[0].Where != `v1/experiments/"p"/2` {
		t.Fatalf("reported %+v", reported)
	}
}

// Salvage copies experiments and keeps each pipeline's IDs going.
func TestSalvageExperiments(t *testing.T) {
	t.Parallel()
	path, counts := filled(t)
	to := filepath.Join(t.TempDir(), "new.db")
	rep, err := store.Salvage(path, to, store.Options{})
	must(t, err)
	if rep.Copied["experiments"] != counts["experiments"] || rep.Lost["experiments"] != 0 {
		t.Fatalf("copied %d, lost %d, want %d, 0", rep.Copied["experiments"], rep.Lost["experiments"], counts["experiments"])
	}
	s := openPath(t, to, store.Options{})
	got, err := s.Experiments("builtin", 0)
	must(t, err)
	if len(got) != 3 || string(got[0].Report) != `{"runs":10}` {
		t.Fatalf("after salvage: %+v", got)
	}
	ex, err := s.NewExperiment(store.Experiment{Pipeline: "builtin", Report: json.RawMessage(`{}`)})
	if err != nil || ex.ID != 4 {
		t.Fatalf("next experiment after salvage: %+v, %v", ex, err)
	}
}
