package builtin

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

// sampleConfigs returns every config of s when it has at most n, else a
// seeded random sample of n of them; the default config is always included.
func sampleConfigs(s *genome.Space, n int, seed uint64) []genome.Config {
	all := s.All()
	out := make([]genome.Config, 0, min(n, len(all))+1)
	if len(all) <= n {
		out = append(out, all...)
	} else {
		rng := rand.New(rand.NewPCG(seed, 0))
		for _, i := range rng.Perm(len(all))[:n] {
			out = append(out, all[i])
		}
	}
	def := s.Default()
	for _, c := range out {
		if c.Equal(def) {
			return out
		}
	}
	return append(out, def)
}

// BenchmarkSpread measures how much the parameters matter: it evaluates every
// valid config (or a seeded sample of 300) of each kernel at one default
// problem and reports the best, worst and default median times.
//
//	go test ./evaluate/builtin -run '^$' -bench Spread -benchtime 1x
func BenchmarkSpread(b *testing.B) {
	tests := []struct {
		kernel  string
		problem int // index into DefaultProblems
	}{
		{"conv2d", 1},
		{"reduce", 1},
		{"sgemm", 1},
	}
	for _, tt := range tests {
		b.Run(tt.kernel, func(b *testing.B) {
			k, err := New(tt.kernel, Options{Reps: evaluate.Reps{Max: 10, MaxTime: time.Second}})
			if err != nil {
				b.Fatal(err)
			}
			p := k.DefaultProblems()[tt.problem]
			s, err := k.Space(p)
			if err != nil {
				b.Fatal(err)
			}
			configs := sampleConfigs(s, 300, 1)
			def := s.Default()
			var best, worst, dflt float64
			var bestKey, worstKey string
			for b.Loop() {
				best, worst, dflt = 0, 0, 0
				for _, c := range configs {
					tr, err := k.Evaluate(context.Background(), c, p)
					if err != nil {
						b.Fatal(err)
					}
					if !tr.OK() {
						b.Fatalf("Evaluate(%s) = %s: %s", tr.Key, tr.Status, tr.Error)
					}
					if best == 0 || tr.Time < best {
						best, bestKey = tr.Time, tr.Key
					}
					if tr.Time > worst {
						worst, worstKey = tr.Time, tr.Key
					}
					if c.Equal(def) {
						dflt = tr.Time
					}
				}
			}
			b.Logf("%s %s: %d of %d configs; best %.3f ms (%s), worst %.3f ms (%s), default %.3f ms (%s)",
				tt.kernel, p.Name, len(configs), s.Size(), best, bestKey, worst, worstKey, dflt, s.Key(def))
			b.ReportMetric(best, "best_ms")
			b.ReportMetric(worst, "worst_ms")
			b.ReportMetric(dflt, "default_ms")
			b.ReportMetric(dflt/best, "default/best")
			b.ReportMetric(worst/best, "worst/best")
		})
	}
}
