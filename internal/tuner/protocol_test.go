package tuner

import (
	"context"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
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

// A promotion over a served config measures the new config beside the
// default and the config served before, in turn, and its certificate
// gives the speed-up over each.
func TestPromotionSpeedupOverServed(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	job.Evaluator = &fixedTimes{Evaluator: job.Evaluator, v: job.Evaluator.(evaluate.Verifier)}
	tn := newTuner(st)
	var others []genome.Config
	for _, c := range job.Space.All() {
		if job.Space.Key(c) != job.Space.Key(job.Default) && len(others) < 2 {
			others = append(others, c)
		}
	}
	old, next := job.Space.Key(others[0]), others[1]
	if err := st.PutServed(job.Key, store.Served{Key: old, TimeMS: 2, Certificate: "c0"}); err != nil {
		t.Fatal(err)
	}
	_, checks, err := tn.latencyChecks(context.Background(), job, next, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ch := range checks {
		b, _ := ch.Inputs["baseline"].(string)
		got[ch.Name] = b
		if ch.Name != "latency" && (ch.Results["ratio"] != 1.0 || ch.Inputs["rounds"] != DefaultLatencyRounds) {
			t.Errorf("%s: %+v, want a ratio of 1 over %d rounds", ch.Name, ch, DefaultLatencyRounds)
		}
	}
	if len(checks) != 3 || got["speedup"] != job.Space.Key(job.Default) || got["speedup_over_served"] != old {
		t.Errorf("checks %v, want latency, speedup over the default and speedup_over_served over %s", got, old)
	}
}
