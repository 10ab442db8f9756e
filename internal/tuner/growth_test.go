package tuner

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/strategies"
)

// TestStoreGrowth drives the real tuner and store through
// $QUASIM_GROWTH_CYCLES small cycles (4 evaluations each) of the builtin
// sgemm kernel with quasimd's default strategy, once with the store's
// default retention and once keeping everything, and logs the file's size
// and each bucket's. docs/operators/state-file.md quotes it:
//
//	QUASIM_GROWTH_CYCLES=1000 go test ./internal/tuner -run TestStoreGrowth -v -timeout 30m
func TestStoreGrowth(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("QUASIM_GROWTH_CYCLES"))
	if n <= 0 {
		t.Skip("set QUASIM_GROWTH_CYCLES to run")
	}
	for _, c := range []struct {
		name string
		opt  store.Options
	}{
		{"defaults", store.Options{}},
		{"keep-all", store.Options{CyclesKept: -1, TrialTimesKept: -1}},
	} {
		path := filepath.Join(t.TempDir(), "quasim.db")
		st, err := store.Open(path, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		k, err := builtin.New("sgemm", builtin.Options{Reps: evaluate.Reps{Max: 5}})
		if err != nil {
			t.Fatal(err)
		}
		p := evaluate.Problem{Dims: []int{64, 64, 64}}
		sp, err := k.Space(p)
		if err != nil {
			t.Fatal(err)
		}
		job := Job{
			Key:     store.JobKey{Kernel: "sgemm", SpecHash: "h", Problem: p.String(), Device: k.Device()},
			Problem: p, Evaluator: k, Space: sp, Default: sp.Default(),
		}
		_, key, _ := ed25519.GenerateKey(nil)
		tn := New(Config{Store: st, Signer: key, NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy {
			f, _ := strategies.Get(strategies.Default)
			return f(s, seed)
		}})
		start := time.Now()
		for i := range n {
			if _, err := tn.Cycle(context.Background(), job, Budget{Evals: 4}, "cron", uint64(i+1), nil); err != nil {
				t.Fatalf("cycle %d: %v", i+1, err)
			}
		}
		took := time.Since(start)
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d cycles in %s: file %d bytes (%.1f MiB)", c.name, n, took.Round(time.Second), fi.Size(), float64(fi.Size())/(1<<20))
		for _, line := range bucketSizes(t, path) {
			t.Logf("%s:   %s", c.name, line)
		}
	}
}

// bucketSizes describes each top-level bucket of the file: records and
// bytes in use.
func bucketSizes(t *testing.T, path string) []string {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []string
	err = db.View(func(tx *bolt.Tx) error {
		r := tx.Bucket([]byte("v1"))
		return r.ForEachBucket(func(name []byte) error {
			s := r.Bucket(name).Stats()
			inuse := s.BranchInuse + s.LeafInuse + s.InlineBucketInuse
			out = append(out, fmt.Sprintf("%-13s %7d keys %10d bytes in use", name, s.KeyN, inuse))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}
