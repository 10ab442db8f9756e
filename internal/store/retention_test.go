package store_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/quasim/quasim/internal/store"
)

// TestRetention: NewCycle keeps the newest CyclesKept cycles and the
// repetition times of the TrialTimesKept fastest ok trials; every trial
// keeps the rest of its record.
func TestRetention(t *testing.T) {
	t.Parallel()
	s := openPath(t, filepath.Join(t.TempDir(), "quasim.db"), store.Options{CyclesKept: 3, TrialTimesKept: 5})
	var trials []store.Trial
	for i := range 40 {
		tr := trial(fmt.Sprint(i), float64(40-i)) // the last written are the fastest
		if i == 3 {
			tr.Status = "timeout"
		}
		trials = append(trials, tr)
	}
	must(t, s.Checkpoint(jobA, trials, nil, nil))
	// Served, on the front or certified: kept whatever their speed, for
	// re-verification and export.
	must(t, s.Promote(jobA, store.Served{Key: "10", TimeMS: 30, Front: []store.FrontPoint{{Key: "11", TimeMS: 29}}},
		store.CertMeta{ID: "c10", Key: "10", IssuedAt: at(1)}, []byte("signed")))
	must(t, s.PutCert(jobA, store.CertMeta{ID: "c12", Key: "12", IssuedAt: at(2)}, []byte("signed")))
	held := map[int]bool{10: true, 11: true, 12: true}
	for range 5 {
		if _, err := s.NewCycle(jobA, store.Cycle{Trigger: "cron"}); err != nil {
			t.Fatal(err)
		}
	}
	cys, err := s.Cycles(jobA)
	must(t, err)
	if len(cys) != 3 || cys[0].ID != 3 || cys[2].ID != 5 {
		t.Errorf("cycles kept %+v, want 3 to 5", cys)
	}
	got, err := s.Trials(jobA)
	must(t, err)
	if len(got) != len(trials) {
		t.Fatalf("%d trials after compaction, want %d", len(got), len(trials))
	}
	for i, tr := range got {
		want := trials[i]
		if i < 35 && i != 3 && !held[i] { // neither among the 5 fastest, failed nor held
			want.TimesMS = nil
		}
		if !reflect.DeepEqual(tr, want) {
			t.Errorf("trial %d after compaction = %+v, want %+v", i, tr, want)
		}
	}
	// Negative values keep everything.
	s2 := openPath(t, filepath.Join(t.TempDir(), "quasim.db"), store.Options{CyclesKept: -1, TrialTimesKept: -1})
	must(t, s2.Checkpoint(jobA, trials, nil, nil))
	for range 5 {
		if _, err := s2.NewCycle(jobA, store.Cycle{Trigger: "cron"}); err != nil {
			t.Fatal(err)
		}
	}
	if cys, _ := s2.Cycles(jobA); len(cys) != 5 {
		t.Errorf("%d cycles kept with CyclesKept -1, want 5", len(cys))
	}
	if got, _ := s2.Trials(jobA); !reflect.DeepEqual(got, trials) {
		t.Errorf("trials changed with TrialTimesKept -1")
	}
}
