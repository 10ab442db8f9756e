package store_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

func TestServedViews(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	var trials []store.Trial
	for i := range 50 {
		trials = append(trials, store.Trial{Key: fmt.Sprintf("%d", i), Status: "ok", TimeMS: float64(100 - i), At: time.Unix(int64(i), 0).UTC()})
	}
	if _, err := s.AddTrials(jobA, trials); err != nil {
		t.Fatal(err)
	}
	sv := store.Served{Key: "40", TimeMS: 60, PromotedAt: time.Unix(99, 0).UTC(), Front: []store.FrontPoint{{Key: "40", TimeMS: 60}, {Key: "45", TimeMS: 55}}}
	if err := s.PutServed(jobA, sv); err != nil {
		t.Fatal(err)
	}
	unknown := store.JobKey{Kernel: "none", SpecHash: "h", Problem: "1", Device: "d"}
	views, err := s.ServedViews([]store.JobKey{jobA, unknown}, [][]string{{"3", "no such key"}, {"3"}})
	if err != nil {
		t.Fatal(err)
	}
	a := views[0]
	if a.Err != nil || !a.HasServed || a.Served.Key != "40" {
		t.Fatalf("view of %s = %+v", jobA, a)
	}
	for _, k := range []string{"40", "45", "3"} {
		if tr, ok := a.Trials[k]; !ok || tr.Key != k || tr.TimeMS != float64(100-atoi(t, k)) {
			t.Errorf("view trial %q = %+v, %v", k, tr, ok)
		}
	}
	if len(a.Trials) != 3 {
		t.Errorf("view holds %d trials, want the 3 named: %v", len(a.Trials), a.Trials)
	}
	if b := views[1]; b.Err != nil || b.HasServed || len(b.Trials) != 0 {
		t.Errorf("view of a job never written = %+v, want empty", b)
	}
}

func atoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestServedViewsCorrupt checks a record that does not decode costs its
// own job's view, not the others'.
func TestServedViewsCorrupt(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "quasim.db")
	s, err := store.Open(p, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []store.JobKey{jobA, jobB} {
		if _, err := s.AddTrials(j, []store.Trial{{Key: "k", Status: "ok", TimeMS: 1}}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutServed(j, store.Served{Key: "k", TimeMS: 1}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	db, err := bolt.Open(p, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("v1")).Bucket([]byte("trials")).Bucket([]byte(jobA.String())).Bucket([]byte("seq")).Put([]byte{0, 0, 0, 0, 0, 0, 0, 1}, []byte("{not json"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	var reported []store.Corruption
	s, err = store.Open(p, store.Options{OnCorrupt: func(c store.Corruption) { reported = append(reported, c) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	views, err := s.ServedViews([]store.JobKey{jobA, jobB}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The corrupt trial costs itself: reported, and left out of the view.
	if _, ok := views[0].Trials["k"]; ok || views[0].Err != nil || !views[0].HasServed {
		t.Errorf("view of the corrupt job = %+v, want its served record without the corrupt trial", views[0])
	}
	if len(reported) != 1 || !errors.Is(reported[0].Err, store.ErrCorrupt) || reported[0].Bucket != "trials" {
		t.Errorf("reported %+v, want the corrupt trial", reported)
	}
	if views[1].Err != nil || views[1].Trials["k"].Key != "k" {
		t.Errorf("view of the sound job = %+v, want its trial", views[1])
	}
}

func TestTrialsAfter(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	var want []store.Trial
	for i := range 25 {
		want = append(want, store.Trial{Key: fmt.Sprintf("c%d", i), Status: "ok", TimeMS: 1, At: time.Unix(int64(i), 0).UTC()})
	}
	if _, err := s.AddTrials(jobA, want); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 7, 25, 26} {
		var got []store.Trial
		var seq uint64
		pages := 0
		for {
			page, last, more, err := s.TrialsAfter(jobA, seq, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > limit {
				t.Fatalf("limit %d: page of %d", limit, len(page))
			}
			got, seq = append(got, page...), last
			pages++
			if !more {
				break
			}
		}
		if len(got) != len(want) {
			t.Fatalf("limit %d: %d trials in %d pages, want %d", limit, len(got), pages, len(want))
		}
		for i := range got {
			if got[i].Key != want[i].Key {
				t.Fatalf("limit %d: trial %d = %q, want %q", limit, i, got[i].Key, want[i].Key)
			}
		}
		if wantPages := (len(want) + limit - 1) / limit; pages != wantPages {
			t.Errorf("limit %d: %d pages, want %d", limit, pages, wantPages)
		}
	}
	all, _, more, err := s.TrialsAfter(jobA, 0, 0)
	if err != nil || len(all) != 25 || more {
		t.Errorf("TrialsAfter(0, no limit) = %d trials, more %v, %v; want 25, false", len(all), more, err)
	}
	none, last, more, err := s.TrialsAfter(jobB, 3, 10)
	if err != nil || len(none) != 0 || more || last != 3 {
		t.Errorf("TrialsAfter of a job never written = %v, %d, %v, %v", none, last, more, err)
	}
}

func TestLastCycle(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	if _, ok, err := s.LastCycle(jobA, false); ok || err != nil {
		t.Fatalf("LastCycle of a job with none = %v, %v", ok, err)
	}
	t0 := time.Unix(1000, 0).UTC()
	for i := range 3 {
		cy, err := s.NewCycle(jobA, store.Cycle{Trigger: "cron", State: "running", Started: t0})
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			cy.State, cy.Ended = "done", t0.Add(time.Duration(i+1)*time.Minute)
			if err := s.PutCycle(jobA, cy); err != nil {
				t.Fatal(err)
			}
		}
	}
	last, ok, err := s.LastCycle(jobA, false)
	if err != nil || !ok || last.ID != 3 || last.State != "running" {
		t.Errorf("LastCycle(any) = %+v, %v, %v; want cycle 3, running", last, ok, err)
	}
	last, ok, err = s.LastCycle(jobA, true)
	if err != nil || !ok || last.ID != 2 || !last.Ended.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("LastCycle(ended) = %+v, %v, %v; want cycle 2", last, ok, err)
	}
}

// TestLastCycleCorrupt: a newest cycle that does not decode costs itself
// only, as in Cycles: LastCycle reports it and answers the one before.
func TestLastCycleCorrupt(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "quasim.db")
	s, err := store.Open(p, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.NewCycle(jobA, store.Cycle{Trigger: "cron"}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	db, err := bolt.Open(p, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("v1")).Bucket([]byte("cycles")).Bucket([]byte(jobA.String())).Put([]byte{0, 0, 0, 0, 0, 0, 0, 3}, []byte("{not json"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	var reported []store.Corruption
	s, err = store.Open(p, store.Options{OnCorrupt: func(c store.Corruption) { reported = append(reported, c) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cy, ok, err := s.LastCycle(jobA, false)
	if err != nil || !ok || cy.ID != 2 {
		t.Errorf("LastCycle = %+v, %v, %v; want cycle 2", cy, ok, err)
	}
	if len(reported) != 1 || reported[0].Bucket != "cycles" {
		t.Errorf("reported %+v, want the corrupt cycle", reported)
	}
}
