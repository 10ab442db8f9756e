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
