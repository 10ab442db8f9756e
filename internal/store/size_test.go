package store

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkTrialBytes reports what a trial costs in the state file: a
// measured trial as a builtin cycle stores one (a config key of 7
// parameters, reps timed runs, cost, time, cycle), its JSON (json_B) and
// the file's growth per trial (file_B), after 20,000 of them in batches of
// 8 as a cycle checkpoints them.
//
//	go test ./internal/store -run '^$' -bench TrialBytes -benchtime 1x
func BenchmarkTrialBytes(b *testing.B) {
	for _, reps := range []int{3, 20, 50} {
		b.Run(fmt.Sprintf("reps=%d", reps), func(b *testing.B) {
			for range b.N {
				s, err := open(filepath.Join(b.TempDir(), "quasim.db"), Options{}, true)
				if err != nil {
					b.Fatal(err)
				}
				fi0, _ := os.Stat(s.path)
				rng := rand.New(rand.NewPCG(1, 2))
				job := JobKey{Kernel: "sgemm", SpecHash: "4466467ffcee7ba4", Problem: "256,256,256", Device: "cpu/AMD EPYC/avx512_bf16/2c"}
				const n = 20000
				var jsonBytes int
				for g := 0; g < n/8; g++ {
					var trials []Trial
					for i := range 8 {
						t := Trial{
							Key:    fmt.Sprintf("%d,%d,%d,%d,%d,%s,%s", 8<<rng.IntN(5), 8<<rng.IntN(5), 8<<rng.IntN(5), 1<<rng.IntN(4), 1+rng.IntN(8), []string{"True", "False"}[rng.IntN(2)], fmt.Sprint(g*8+i)),
							Status: "ok",
							CostS:  0.05 + rng.Float64(),
							At:     time.Unix(1700000000, 0).Add(time.Duration(rng.Int64N(1e15))).UTC(),
							Cycle:  1 + g/50,
						}
						for range reps {
							t.TimesMS = append(t.TimesMS, float64(time.Duration(1e6+rng.Int64N(1e6)))/float64(time.Millisecond))
						}
						t.TimeMS = t.TimesMS[len(t.TimesMS)/2]
						data, _ := json.Marshal(trialRecord{V: recordVersion, Trial: t})
						jsonBytes += len(data)
						trials = append(trials, t)
					}
					if err := s.Checkpoint(job, trials, nil, nil); err != nil {
						b.Fatal(err)
					}
				}
				var seqAlloc, seqUse, keysAlloc, keysUse int
				s.view(func(tx *bolt.Tx) error {
					jb, _ := jobBucket(tx, bucketTrials, job)
					st := jb.Bucket(bucketTrialSeq).Stats()
					seqAlloc, seqUse = st.BranchAlloc+st.LeafAlloc, st.BranchInuse+st.LeafInuse
					st = jb.Bucket(bucketTrialKeys).Stats()
					keysAlloc, keysUse = st.BranchAlloc+st.LeafAlloc, st.BranchInuse+st.LeafInuse
					return nil
				})
				free := s.db.Stats().FreeAlloc
				s.Close()
				fi, _ := os.Stat(s.path)
				b.ReportMetric(float64(jsonBytes)/n, "json_B")
				b.ReportMetric(float64(seqUse)/n, "seq_used_B")
				b.ReportMetric(float64(seqAlloc)/n, "seq_pages_B")
				b.ReportMetric(float64(keysUse)/n, "keys_used_B")
				b.ReportMetric(float64(keysAlloc)/n, "keys_pages_B")
				b.ReportMetric(float64(free)/n, "free_B")
				b.ReportMetric(float64(fi.Size()-fi0.Size())/n, "file_B")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// TestTrialPagesFull checks appended trials fill the pages of seq/ (they
// were left half empty by page splits).
func TestTrialPagesFull(t *testing.T) {
	t.Parallel()
	s, err := open(filepath.Join(t.TempDir(), "quasim.db"), Options{}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	job := JobKey{Kernel: "k", SpecHash: "h", Problem: "1", Device: "d"}
	for g := range 500 {
		var trials []Trial
		for i := range 8 {
			trials = append(trials, Trial{Key: fmt.Sprintf("%d,%d", g, i), Status: "ok", TimeMS: 1.5, TimesMS: []float64{1.5, 1.25, 1.75}, CostS: 0.1, At: time.Unix(int64(g), 0)})
		}
		if err := s.Checkpoint(job, trials, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	err = s.view(func(tx *bolt.Tx) error {
		jb, err := jobBucket(tx, bucketTrials, job)
		if err != nil {
			return err
		}
		st := jb.Bucket(bucketTrialSeq).Stats()
		if fill := float64(st.LeafInuse) / float64(st.LeafAlloc); fill < 0.85 {
			t.Errorf("seq/ leaf pages %.0f%% full (%d of %d bytes), want 85%% or more", 100*fill, st.LeafInuse, st.LeafAlloc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
