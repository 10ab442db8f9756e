package store_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/quasim/quasim/internal/store"
)

// A reporter's reports of a certificate are one record: its count, first
// and last time, its largest error; a certificate keeps its maxReporters
// most recent reporters; a reopen reads them back.
func TestReports(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	s := openPath(t, path, store.Options{})
	for i := range 1000 {
		if _, err := s.AddReport(store.FaultReport{Cert: "c1", Job: jobA.String(), Key: "8,8", Reporter: "uid:1000", Source: "rt", Error: float64(i%7) / 10, Last: at(i)}, 3); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Reports("c1")
	if err != nil || len(got) != 1 {
		t.Fatalf("Reports(c1) after 1000 reports of one uid = %+v, %v; want one record", got, err)
	}
	if r := got[0]; r.Count != 1000 || !r.First.Equal(at(0)) || !r.Last.Equal(at(999)) || r.Error != 0.6 || r.Source != "rt" {
		t.Errorf("record %+v", r)
	}
	for i := range 4 {
		_, err := s.AddReport(store.FaultReport{Cert: "c1", Reporter: fmt.Sprintf("node:n%d", i), Reason: "parity", Last: at(1000 + i)}, 3)
		must(t, err)
	}
	_, err = s.AddReport(store.FaultReport{Cert: "c2", Reporter: "uid:7", Last: at(1)}, 3)
	must(t, err)
	must(t, s.Close())
	s = openPath(t, path, store.Options{})
	got, err = s.Reports("c1")
	must(t, err)
	var who []string
	for _, r := range got {
		who = append(who, r.Reporter)
	}
	if want := []string{"node:n1", "node:n2", "node:n3"}; !reflect.DeepEqual(who, want) {
		t.Errorf("reporters of c1 = %q, want the newest 3 %q", who, want)
	}
	if got, err := s.Reports("c2"); err != nil || len(got) != 1 || got[0].Count != 1 {
		t.Errorf("Reports(c2) = %+v, %v", got, err)
	}
	for name, r := range map[string]store.FaultReport{"no cert": {Reporter: "uid:1"}, "no reporter": {Cert: "c"}, "slash": {Cert: "a/b", Reporter: "uid:1"}} {
		if _, err := s.AddReport(r, 3); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AddReport(%s) = %v, want ErrInvalid", name, err)
		}
	}
}

// Fleet records come back byte for byte after a reopen, with the time the
// view was last in step; the bucket holds at most the bound given; a
// deleted record is gone; bad stored bytes are skipped and reported.
func TestFleetState(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	s := openPath(t, path, store.Options{})
	if recs, synced, err := s.FleetState(); err != nil || len(recs) != 0 || !synced.IsZero() {
		t.Fatalf("FleetState() of a new store = %v, %v, %v", recs, synced, err)
	}
	for i, k := range []string{"cert.a", "cert.b", "revoke.x", "cert.c"} {
		ok, err := s.PutFleetRecord(store.FleetRecord{Key: k, Data: []byte(fmt.Sprintf(`{"n":%d}`, i)), At: at(i)}, 3)
		if err != nil || ok != (i < 3) {
			t.Errorf("PutFleetRecord(%s) = %v, %v; want stored %v", k, ok, err, i < 3)
		}
	}
	if ok, err := s.PutFleetRecord(store.FleetRecord{Key: "cert.a", Data: []byte(`{"n":9}`), At: at(9)}, 3); err != nil || !ok {
		t.Errorf("replacing cert.a in a full bucket = %v, %v", ok, err)
	}
	must(t, s.DeleteFleetRecord("cert.b"))
	must(t, s.SetFleetSynced(at(5)))
	for _, r := range []store.FleetRecord{{Key: "synced", Data: []byte("x")}, {Key: "cert.z"}, {Data: []byte("x")}} {
		if _, err := s.PutFleetRecord(r, 3); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("PutFleetRecord(%q, %d bytes) = %v, want ErrInvalid", r.Key, len(r.Data), err)
		}
	}
	must(t, s.Close())
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("v1")).Bucket([]byte("fleet")).Put([]byte("cert.bad"), []byte(`{"v":1,"key":"cert.other","data":"eA=="}`))
	})
	var reported []store.Corruption
	s = openPath(t, path, store.Options{OnCorrupt: func(c store.Corruption) { reported = append(reported, c) }})
	recs, synced, err := s.FleetState()
	must(t, err)
	want := []store.FleetRecord{{Key: "cert.a", Data: []byte(`{"n":9}`), At: at(9)}, {Key: "revoke.x", Data: []byte(`{"n":2}`), At: at(2)}}
	for i := range recs {
		recs[i].At = recs[i].At.UTC()
	}
	if !reflect.DeepEqual(recs, want) || !synced.Equal(at(5)) {
		t.Errorf("FleetState() = %+v, %v; want %+v, %v", recs, synced, want, at(5))
	}
	if len(reported) == 0 || reported[len(reported)-1].Bucket != "fleet" {
		t.Errorf("bad record not reported: %+v", reported)
	}
}

// Salvage copies reports and fleet records and loses only a bad one.
func TestSalvageReportsAndFleet(t *testing.T) {
	t.Parallel()
	path, counts := filled(t)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("v1")).Bucket([]byte("reports")).Put([]byte("c9/uid:1"), []byte(`{"v":1,"cert":"c9","reporter":"uid:2","count":1}`))
	})
	to := filepath.Join(t.TempDir(), "new.db")
	rep, err := store.Salvage(path, to, store.Options{})
	must(t, err)
	if rep.Copied["reports"] != counts["reports"] || rep.Lost["reports"] != 1 || rep.Copied["fleet"] != counts["fleet"] {
		t.Fatalf("copied %d reports, lost %d, copied %d fleet records; want %d, 1, %d", rep.Copied["reports"], rep.Lost["reports"], rep.Copied["fleet"], counts["reports"], counts["fleet"])
	}
	s := openPath(t, to, store.Options{})
	if got, err := s.Reports("c0"); err != nil || len(got) != 3 {
		t.Errorf("reports after salvage: %+v, %v", got, err)
	}
	recs, synced, err := s.FleetState()
	if err != nil || len(recs) != 2 || synced.IsZero() {
		t.Errorf("fleet state after salvage: %+v, %v, %v", recs, synced, err)
	}
}
