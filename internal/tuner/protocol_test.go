package tuner

import (
	"context"
	"sync"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

// fixedTimes measures every config the way the search does (Evaluate):
// 2 ms a run the first time a config is measured, 3 ms every time after,
// so a time taken after selection tells itself apart from the search's.
type fixedTimes struct {
	evaluate.Evaluator
	v evaluate.Verifier

	mu   sync.Mutex
	seen map[string]bool
}

func (f *fixedTimes) Evaluate(ctx context.Context, c genome.Config, p evaluate.Problem) (evaluate.Trial, error) {
	tr, err := f.Evaluator.Evaluate(ctx, c, p)
	if tr.OK() {
		f.mu.Lock()
		ms := 2.0
		if f.seen[tr.Key] {
			ms = 3
		}
		if f.seen == nil {
			f.seen = map[string]bool{}
		}
		f.seen[tr.Key] = true
		f.mu.Unlock()
		tr.Times, tr.Time = []float64{ms, ms, ms}, ms
	}
	return tr, err
}

func (f *fixedTimes) Verify(ctx context.Context, c genome.Config, p evaluate.Problem, s evaluate.VerifySettings) (evaluate.VerifyReport, error) {
	return f.v.Verify(ctx, c, p, s)
}

// The served time and the certificate's latency come from the search's
// own measurement (Evaluate), taken again after selection, never from the
// times that selected the config: one protocol for search and certificate.
func TestCertificateMeasuresAsTheSearch(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	job.Evaluator = &fixedTimes{Evaluator: job.Evaluator, v: job.Evaluator.(evaluate.Verifier)}
	tn := newTuner(st)
	if _, err := tn.Cycle(context.Background(), job, Budget{Evals: 4}, "api", 1, nil); err != nil {
		t.Fatal(err)
	}
	sv, ok, _ := st.Served(job.Key)
	if !ok || sv.TimeMS != 3 || sv.CILowMS != 3 || sv.CIHighMS != 3 {
		t.Fatalf("served %+v, want 3 ms, measured by the search's protocol after selection, its interval 3 to 3", sv)
	}
	_, meta, err := st.Cert(sv.Certificate)
	if err != nil || meta.TimeMS != 3 {
		t.Fatalf("certificate %+v, %v: want a median of 3 ms", meta, err)
	}
	if sv.Key != job.Space.Key(job.Default) && (sv.Speedup == nil || sv.Speedup.Ratio != 1 || sv.Speedup.Rounds != DefaultLatencyRounds) {
		t.Errorf("speed-up %+v: want 1 over %d rounds (every config takes 3 ms once selected)", sv.Speedup, DefaultLatencyRounds)
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
