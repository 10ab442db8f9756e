package strategies

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/evolve/evolvetest"
	"github.com/quasim/quasim/genome"
)

// BenchmarkPortfolioMarginalCost is the portfolio's own time per
// evaluation in windows of a 2,000-evaluation run on the 17,956-config RTX
// 3090 gemm space:
//
//	go test ./internal/strategies -run '^$' -bench PortfolioMarginalCost -benchtime 1x
func BenchmarkPortfolioMarginalCost(b *testing.B) {
	f, _ := Get("portfolio")
	evolvetest.MarginalCost(b, gemm3090(b), f, []int{1, 100, 400, 1000, 2000})
}

// BenchmarkJudgedMarginalCost is the same, to 1,000 evaluations, for the
// portfolios with a judge: pooled (every member proposes at every
// evaluation) and screened (the bandit's member proposes three):
//
//	go test ./internal/strategies -run '^$' -bench 'JudgedMarginalCost|PortfolioMarginalCost' -benchtime 1x
func BenchmarkJudgedMarginalCost(b *testing.B) {
	for _, name := range []string{"portfolio:judge=mean", "portfolio:screen=3"} {
		b.Run(name, func(b *testing.B) {
			f, _ := Get(name)
			evolvetest.MarginalCost(b, gemm3090(b), f, []int{1, 100, 400, 1000})
		})
	}
}

// BenchmarkForestMarginalCost is the same for forest search alone.
func BenchmarkForestMarginalCost(b *testing.B) {
	f, _ := Get("forest")
	evolvetest.MarginalCost(b, gemm3090(b), f, []int{1, 100, 400, 1000, 2000})
}

// gemm3090 is the recorded RTX 3090 gemm space, replayed.
func gemm3090(b *testing.B) evolve.BenchSpace {
	path := filepath.Join("..", "..", "..", "shared", "spaces", "gemm_clblast_RTX_3090.json.gz")
	if _, err := os.Stat(path); err != nil {
		b.Skipf("skipping: %v", err)
	}
	rec, err := replay.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	sp, err := rec.Space(evaluate.Problem{})
	if err != nil {
		b.Fatal(err)
	}
	bs := evolve.BenchSpace{Name: rec.Name, Space: sp, Measure: func(c genome.Config) (evolve.Measurement, error) {
		tr, err := rec.Evaluate(context.Background(), c, evaluate.Problem{})
		if err != nil {
			return evolve.Measurement{}, err
		}
		return evolve.Measurement{Key: tr.Key, Time: tr.Time, OK: tr.OK()}, nil
	}}
	return bs
}
