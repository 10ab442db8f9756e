package tuner

import (
	"context"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store/storetest"
)

// fixedTimes measures every config at 2 ms a run the way the search does
// (Evaluate), and reports 9 ms a run from its own verification loop: two
// protocols that disagree.
type fixedTimes struct {
	evaluate.Evaluator
	v evaluate.Verifier
}

func (f *fixedTimes) Evaluate(ctx context.Context, c genome.Config, p evaluate.Problem) (evaluate.Trial, error) {
	tr, err := f.Evaluator.Evaluate(ctx, c, p)
	if tr.OK() {
		tr.Times, tr.Time = []float64{2, 2, 2}, 2
	}
	return tr, err
}

func (f *fixedTimes) Verify(ctx context.Context, c genome.Config, p evaluate.Problem, s evaluate.VerifySettings) (evaluate.VerifyReport, error) {
	rep, err := f.v.Verify(ctx, c, p, s)
	rep.Latency = evaluate.LatencyStats([]float64{9, 9, 9}, 1)
	return rep, err
}

// The served time and the certificate's latency come from the search's
// own measurement (Evaluate), taken after selection, never from a timing
// loop of the verification's: one protocol for search and certificate.
func TestCertificateMeasuresAsTheSearch(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	job.Evaluator = &fixedTimes{Evaluator: job.Evaluator, v: job.Evaluator.(evaluate.Verifier)}
	tn := newTuner(st)
	if _, err := tn.Cycle(context.Background(), job, Budget{Evals: 4}, "api", 1, nil); err != nil {
		t.Fatal(err)
	}
	sv, ok, _ := st.Served(job.Key)
	if !ok || sv.TimeMS != 2 || sv.CILowMS != 2 || sv.CIHighMS != 2 {
		t.Fatalf("served %+v, want 2 ms from the search's protocol, its interval 2 to 2", sv)
	}
	_, meta, err := st.Cert(sv.Certificate)
	if err != nil || meta.TimeMS != 2 {
		t.Fatalf("certificate %+v, %v: want a median of 2 ms", meta, err)
	}
	if sv.Key != job.Space.Key(job.Default) && (sv.Speedup == nil || sv.Speedup.Ratio != 1 || sv.Speedup.Rounds != DefaultLatencyRounds) {
		t.Errorf("speed-up %+v: want 1 over %d rounds (every config takes 2 ms)", sv.Speedup, DefaultLatencyRounds)
	}
}
