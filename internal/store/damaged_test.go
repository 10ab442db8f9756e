package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/quasim/quasim/internal/store"
)

// filled writes a state file with three jobs of trials, cycles,
// observations, a served config, a certificate and a spec, big enough to
// span many pages, and returns its path and record counts.
func filled(t *testing.T) (string, map[string]int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "quasim.db")
	s, err := store.Open(path, store.Options{})
	must(t, err)
	counts := map[string]int{}
	for j, job := range []store.JobKey{jobA, jobB, jobC} {
		var trials []store.Trial
		for i := range 120 {
			tr := trial(fmt.Sprintf("%d,%d,%d", j, i, i*7), float64(i+1))
			tr.TimesMS = []float64{1, 2, 3, 4, 5, 6, 7, 8}
			trials = append(trials, tr)
		}
		for i := 0; i < len(trials); i += 20 {
			cy, err := s.NewCycle(job, store.Cycle{Trigger: "api", State: "running", Started: at(i)})
			must(t, err)
			cy.State, cy.Evals = "done", 20
			must(t, s.Checkpoint(job, trials[i:i+20], []byte(strings.Repeat("p", 300)), &cy))
			counts["cycles"]++
		}
		counts["trials"] += len(trials)
		must(t, s.AddObservation(job, store.Observation{Key: trials[0].Key, At: at(j), LatencyMS: 1}))
		counts["observations"]++
		must(t, s.Promote(job, store.Served{Key: trials[0].Key, TimeMS: 1}, store.CertMeta{ID: fmt.Sprintf("c%d", j), Key: trials[0].Key, IssuedAt: at(j)}, []byte("signed")))
		counts["served"]++
		counts["certs"]++
		counts["policies"]++
		counts["jobs"]++
	}
	must(t, s.PutSpec(store.Spec{Name: "sgemm", Hash: "aaa", Raw: []byte("name: sgemm"), Loaded: at(1)}))
	counts["specs"]++
	for i := range 6 {
		_, err := s.AddSpans([]string{"infer", "train"}[i%2], spanBatch(i, 40), store.SpanRetention{})
		must(t, err)
		counts["spans"]++
	}
	for i := range 3 {
		_, err := s.NewExperiment(store.Experiment{Pipeline: "builtin", At: at(i), Report: []byte(`{"runs":10}`)})
		must(t, err)
		counts["experiments"]++
	}
	for _, p := range []string{"infer", "train"} {
		must(t, s.PutZoning(store.Zoning{Pipeline: p, Section: "chain=conv2d,reduce", Jobs: []string{"a|h|1|cpu"}, Configs: []string{"1"}, TunedAt: at(1), Result: []byte(`{"map":null}`)}))
		counts["zonings"]++
	}
	for i := range 3 {
		_, err := s.AddReport(store.FaultReport{Cert: "c0", Job: jobA.String(), Key: "k", Reporter: fmt.Sprintf("uid:%d", 1000+i), Error: 0.5, Last: at(i)}, 8)
		must(t, err)
		counts["reports"]++
	}
	for _, k := range []string{"cert.a.b.c.d.e", "revoke.c0"} {
		_, err := s.PutFleetRecord(store.FleetRecord{Key: k, Data: []byte(`{"v":1}`), At: at(1)}, 8)
		must(t, err)
		counts["fleet"]++
	}
	must(t, s.SetFleetSynced(at(2)))
	counts["fleet"]++
	must(t, s.Close())
	return path, counts
}

func copyFile(t *testing.T, from, to string) []byte {
	t.Helper()
	b, err := os.ReadFile(from)
	must(t, err)
	must(t, os.WriteFile(to, b, 0o600))
	return b
}

// unchanged fails the test when the file at path no longer holds want.
func unchanged(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	must(t, err)
	if !bytes.Equal(got, want) {
		t.Errorf("%s was written to", path)
	}
}

// TestOpenTruncated: a truncated state file is refused with ErrDamaged and
// a way out, without a panic and without a write.
func TestOpenTruncated(t *testing.T) {
	t.Parallel()
	path, _ := filled(t)
	full, err := os.ReadFile(path)
	must(t, err)
	for _, size := range []int{12 << 10, len(full) / 2, 3 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "quasim.db")
			must(t, os.WriteFile(p, full[:size], 0o600))
			for _, ro := range []bool{false, true} {
				_, err := store.Open(p, store.Options{ReadOnly: ro})
				if !errors.Is(err, store.ErrDamaged) {
					t.Fatalf("Open(readonly=%v) of a file truncated to %d bytes = %v, want ErrDamaged", ro, size, err)
				}
				if !strings.Contains(err.Error(), "salvage") || !strings.Contains(err.Error(), p) {
					t.Errorf("error does not say how to recover: %v", err)
				}
			}
			rep, err := store.CheckFile(p, store.Options{})
			must(t, err)
			if !rep.Damaged() {
				t.Errorf("CheckFile found no damage in a truncated file: %+v", rep)
			}
			unchanged(t, p, full[:size])
		})
	}
}

// flip flips n random bytes of data, chosen by seed, in place.
func flip(data []byte, n int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	for range n {
		data[rng.IntN(len(data))] ^= byte(1 + rng.IntN(255))
	}
}

// TestOpenFlipped: after 200 random byte flips a file is either refused
// (ErrDamaged, not written) or opens, and then every listing answers.
func TestOpenFlipped(t *testing.T) {
	t.Parallel()
	path, _ := filled(t)
	full, err := os.ReadFile(path)
	must(t, err)
	refused := 0
	for seed := range uint64(16) {
		data := bytes.Clone(full)
		flip(data, 200, seed)
		p := filepath.Join(t.TempDir(), fmt.Sprintf("flipped-%d.db", seed))
		must(t, os.WriteFile(p, data, 0o600))
		s, err := store.Open(p, store.Options{OnCorrupt: func(store.Corruption) {}})
		if err != nil {
			if !errors.Is(err, store.ErrDamaged) {
				t.Errorf("seed %d: Open = %v, want ErrDamaged or success", seed, err)
			}
			refused++
			unchanged(t, p, data)
			continue
		}
		jobs, err := s.Jobs()
		if err != nil {
			t.Errorf("seed %d: Jobs = %v", seed, err)
		}
		for _, job := range append(jobs, jobA, jobB, jobC) {
			if _, err := s.Trials(job); err != nil {
				t.Errorf("seed %d: Trials(%s) = %v", seed, job, err)
			}
			if _, err := s.Cycles(job); err != nil {
				t.Errorf("seed %d: Cycles(%s) = %v", seed, job, err)
			}
		}
		if _, err := s.Specs(); err != nil {
			t.Errorf("seed %d: Specs = %v", seed, err)
		}
		if _, err := s.Certs(); err != nil {
			t.Errorf("seed %d: Certs = %v", seed, err)
		}
		must(t, s.Close())
	}
	if refused == 0 {
		t.Errorf("no file of 200 flipped bytes was found damaged")
	}
}

// TestSalvage copies what is readable out of truncated and flipped files
// into files that check clean, and accounts for what it could not copy.
func TestSalvage(t *testing.T) {
	t.Parallel()
	path, counts := filled(t)
	full, err := os.ReadFile(path)
	must(t, err)
	cases := map[string][]byte{"truncated": full[:12<<10], "half": full[:len(full)/2]}
	for seed := range uint64(6) {
		data := bytes.Clone(full)
		flip(data, 200, seed)
		cases[fmt.Sprintf("flipped-%d", seed)] = data
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			from, to := filepath.Join(dir, "quasim.db"), filepath.Join(dir, "new.db")
			must(t, os.WriteFile(from, data, 0o600))
			rep, err := store.Salvage(from, to, store.Options{})
			if err != nil {
				// bbolt could read neither meta page: nothing to copy.
				if !errors.Is(err, store.ErrDamaged) {
					t.Fatalf("Salvage = %v", err)
				}
				t.Logf("nothing salvaged: %v", err)
				return
			}
			unchanged(t, from, data)
			for b, n := range rep.Copied {
				if n+rep.Lost[b] > counts[b] {
					t.Errorf("%s: %d copied + %d lost, the file held %d", b, n, rep.Lost[b], counts[b])
				}
			}
			if len(rep.Corrupt) != sum(rep.Lost) {
				t.Errorf("%d corrupt records named, %d counted lost", len(rep.Corrupt), sum(rep.Lost))
			}
			s, err := store.Open(to, store.Options{})
			must(t, err)
			defer s.Close()
			if c := s.CheckReport(); c == nil || c.Damaged() || len(c.Corrupt) > 0 || !c.Complete {
				t.Fatalf("salvaged file checks %+v", c)
			}
			n := 0
			jobs, err := s.Jobs() // a flipped job key may name another job
			must(t, err)
			for _, job := range jobs {
				trials, err := s.Trials(job)
				must(t, err)
				n += len(trials)
				for _, tr := range trials {
					if ok, _ := s.HasTrial(job, tr.Key); !ok {
						t.Errorf("trial %s copied without its index", tr.Key)
					}
				}
			}
			if n != rep.Copied["trials"] {
				t.Errorf("%d trials in the new file, report says %d", n, rep.Copied["trials"])
			}
			t.Logf("copied %v, lost %v, %d unreadable parts", rep.Copied, rep.Lost, len(rep.Unreadable))
		})
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestSalvageIntact copies a sound file whole, and one with a corrupt
// record whole but that record, which it names.
func TestSalvageIntact(t *testing.T) {
	t.Parallel()
	path, counts := filled(t)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("v1")).Bucket([]byte("trials")).Bucket([]byte(jobB.String())).Bucket([]byte("seq")).
			Put([]byte{0, 0, 0, 0, 0, 0, 0, 17}, []byte(`{"v":1,"key":`))
	})
	to := filepath.Join(t.TempDir(), "new.db")
	rep, err := store.Salvage(path, to, store.Options{})
	must(t, err)
	want := counts
	want["trials"]--
	for _, b := range rep.Buckets() {
		if rep.Copied[b] != want[b] {
			t.Errorf("%s: copied %d, want %d", b, rep.Copied[b], want[b])
		}
	}
	if rep.Lost["trials"] != 1 || len(rep.Corrupt) != 1 || !strings.Contains(rep.Corrupt[0].Where, `seq/17`) || len(rep.Unreadable) != 0 {
		t.Errorf("lost %v %+v %v, want trial 17 of %s", rep.Lost, rep.Corrupt, rep.Unreadable, jobB)
	}
	if _, err := store.Salvage(path, to, store.Options{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Salvage onto an existing file = %v, want ErrInvalid", err)
	}
	s := openPath(t, to, store.Options{})
	sv, ok, err := s.Served(jobB)
	if err != nil || !ok || sv.Certificate != "c1" {
		t.Errorf("served after salvage = %+v %v %v", sv, ok, err)
	}
	if certs, err := s.JobCerts(jobB); err != nil || len(certs) != 1 {
		t.Errorf("certificates of %s after salvage = %v %v", jobB, certs, err)
	}
	cycles, err := s.Cycles(jobB)
	must(t, err)
	cy, err := s.NewCycle(jobB, store.Cycle{Trigger: "api"})
	must(t, err)
	if cy.ID != len(cycles)+1 {
		t.Errorf("next cycle after salvage is %d, want %d", cy.ID, len(cycles)+1)
	}
}

// TestCorruptRecordCostsItself: one trial that does not decode is skipped
// by the listing, reported, counted by the check of Open, and costs no
// other record.
func TestCorruptRecordCostsItself(t *testing.T) {
	t.Parallel()
	path, _ := filled(t)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("v1")).Bucket([]byte("trials")).Bucket([]byte(jobA.String())).Bucket([]byte("seq")).
			Put([]byte{0, 0, 0, 0, 0, 0, 0, 17}, []byte("\x00garbage"))
	})
	var (
		mu  sync.Mutex
		got []store.Corruption
	)
	s := openPath(t, path, store.Options{OnCorrupt: func(c store.Corruption) {
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
	}})
	if rep := s.CheckReport(); rep == nil || rep.Damaged() || len(rep.Corrupt) != 1 {
		t.Fatalf("check of Open = %+v, want the one corrupt trial", rep)
	}
	trials, err := s.Trials(jobA)
	must(t, err)
	if len(trials) != 119 {
		t.Errorf("%d trials listed, want the 119 that decode", len(trials))
	}
	if len(got) != 1 || got[0].Bucket != "trials" || !strings.HasSuffix(got[0].Where, "/seq/17") {
		t.Errorf("reported %+v, want trial 17", got)
	}
}

// TestCheckLocked: CheckFile and Salvage wait for the lock of a store open
// for writing, and then give up with ErrLocked rather than read pages being
// written.
func TestCheckLocked(t *testing.T) {
	t.Parallel()
	path, _ := filled(t)
	s := openPath(t, path, store.Options{})
	must(t, s.PutSpec(store.Spec{Name: "x", Hash: "1", Loaded: at(1)}))
	if _, err := store.CheckFile(path, store.Options{LockTimeout: 100 * time.Millisecond}); !errors.Is(err, store.ErrLocked) {
		t.Errorf("CheckFile of an open store = %v, want ErrLocked", err)
	}
	if _, err := store.Salvage(path, filepath.Join(t.TempDir(), "new.db"), store.Options{LockTimeout: 100 * time.Millisecond}); !errors.Is(err, store.ErrLocked) {
		t.Errorf("Salvage of an open store = %v, want ErrLocked", err)
	}
}

// TestCheckBound: a check cut short by its time bound reports itself
// incomplete, not damaged, and Open goes on.
func TestCheckBound(t *testing.T) {
	t.Parallel()
	path, _ := filled(t)
	rep, err := store.CheckFile(path, store.Options{CheckTimeout: time.Nanosecond})
	if err != nil || rep.Complete || rep.Damaged() {
		t.Fatalf("CheckFile within 1 ns = %+v, %v; want incomplete and not damaged", rep, err)
	}
	s := openPath(t, path, store.Options{CheckTimeout: time.Nanosecond})
	if rep := s.CheckReport(); rep == nil || rep.Complete {
		t.Errorf("CheckReport = %+v, want the incomplete check", rep)
	}
}

// TestOpenTornMeta: a crash mid-commit can leave one of bbolt's two meta
// pages torn; bbolt opens from the other, so Open must too (it refused the
// file as damaged).
func TestOpenTornMeta(t *testing.T) {
	t.Parallel()
	path, _ := filled(t)
	ps := os.Getpagesize()
	for page := range 2 {
		p := filepath.Join(t.TempDir(), fmt.Sprintf("torn-%d.db", page))
		data := copyFile(t, path, p)
		copy(data[page*ps+16:page*ps+64], make([]byte, 48)) // root, freelist and checksum gone
		must(t, os.WriteFile(p, data, 0o600))
		s, err := store.Open(p, store.Options{})
		if err != nil {
			t.Fatalf("meta page %d torn: Open = %v, want it opened from the other", page, err)
		}
		trials, err := s.Trials(jobA)
		if err != nil || len(trials) != 120 {
			t.Errorf("meta page %d torn: %d trials, %v; want 120", page, len(trials), err)
		}
		must(t, s.Close())
	}
}
