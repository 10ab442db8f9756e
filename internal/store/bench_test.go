package store

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkCheckpoint measures one generation: 8 new trials, a 4 KiB
// policy and the cycle's update, in one transaction; with fsync (as in
// production) and without.
func BenchmarkCheckpoint(b *testing.B) {
	for _, noSync := range []bool{false, true} {
		name := "sync"
		if noSync {
			name = "nosync"
		}
		b.Run(name, func(b *testing.B) {
			s, err := open(filepath.Join(b.TempDir(), "quasim.db"), Options{}, noSync)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			job := JobKey{Kernel: "sgemm", SpecHash: "0123456789abcdef", Problem: "1024,1024,1024", Device: "cpu/bench"}
			cy, err := s.NewCycle(job, Cycle{Trigger: "cron", State: "running", Started: time.Now(), Budget: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			policy := make([]byte, 4096)
			for i := range policy {
				policy[i] = byte(i * 7)
			}
			trials := make([]Trial, 8)
			b.ReportAllocs()
			b.ResetTimer()
			for g := 0; b.Loop(); g++ {
				for i := range trials {
					trials[i] = Trial{
						Key:     fmt.Sprintf("%d,%d,%d,%d", g, i, g%16, i%4),
						Status:  "ok",
						TimeMS:  1.5,
						TimesMS: []float64{1.5, 1.51, 1.49, 1.5, 1.52},
						CostS:   0.01,
						At:      time.Unix(int64(g), 0),
						Cycle:   cy.ID,
					}
				}
				cy.Evals += len(trials)
				if err := s.Checkpoint(job, trials, policy, &cy); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheckFile measures the check Open runs before it opens a file
// for writing, on a file of 50,000 trials of 30 repetition times each in 10
// jobs (about 57 MB); it reports the file's size and the bytes checked per
// second.
func BenchmarkCheckFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "quasim.db")
	s, err := open(path, Options{}, true)
	if err != nil {
		b.Fatal(err)
	}
	for j := range 10 {
		job := JobKey{Kernel: "k", SpecHash: "h", Problem: fmt.Sprint(j), Device: "cpu/bench"}
		for g := range 5 {
			var trials []Trial
			for i := range 1000 {
				tr := Trial{Key: fmt.Sprintf("%d,%d", g, i), Status: "ok", TimeMS: 1.25, CostS: 0.5, At: time.Now(), TimesMS: make([]float64, 30)}
				for k := range tr.TimesMS {
					tr.TimesMS[k] = 1.2345678 + float64(k)/7
				}
				trials = append(trials, tr)
			}
			if _, err := s.AddTrials(job, trials); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	size := fileSize(path)
	b.ResetTimer()
	for range b.N {
		rep, err := CheckFile(path, Options{})
		if err != nil || rep.Damaged() || !rep.Complete {
			b.Fatalf("CheckFile = %+v, %v", rep, err)
		}
	}
	b.ReportMetric(float64(size)/1e6, "MB")
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
}
