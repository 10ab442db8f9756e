package tuner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

// A wrong config on the (time, energy) front fails verification, is
// dropped, and the front is drawn again without it; the verification
// budget (Candidates) bounds how much of the front is certified.
func TestFrontDropsWrongConfig(t *testing.T) {
	k, err := builtin.New("sgemm", builtin.Options{TestWrongVariant: true, Reps: evaluate.Reps{Min: 1, Max: 3}})
	if err != nil {
		t.Fatal(err)
	}
	p := evaluate.Problem{Dims: []int{100, 72, 64}} // m is no multiple of tile_m: ikj_fast is wrong
	sp, err := k.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	if sp, err = sp.Restrict([]string{`b_input == 'fp32'`}, nil); err != nil {
		t.Fatal(err)
	}
	var wrong string
	var right []string
	for _, c := range sp.All() {
		key := sp.Key(c)
		switch {
		case strings.Contains(key, ",ikj_fast,") && wrong == "" && sp.ConfigMap(c)["tile_m"].(int64) > 4:
			wrong = key
		case strings.Contains(key, ",ikj,") && len(right) < 5:
			right = append(right, key)
		}
	}
	if wrong == "" || len(right) < 5 {
		t.Fatalf("configs: wrong %q, right %v", wrong, right)
	}
	// A is fastest; W beats B on both and C is dominated by B.
	trials := []store.Trial{
		{Key: right[0], Status: "ok", TimeMS: 1.0, EnergyMJ: 100, Cycle: 1},
		{Key: wrong, Status: "ok", TimeMS: 1.1, EnergyMJ: 60, Cycle: 1},
		{Key: right[1], Status: "ok", TimeMS: 1.2, EnergyMJ: 70, Cycle: 1},
		{Key: right[2], Status: "ok", TimeMS: 1.3, EnergyMJ: 90, Cycle: 1},
	}
	for _, tc := range []struct {
		candidates int
		front      []string
	}{
		{64, []string{right[0], right[1]}},
		{2, []string{right[0]}}, // A and W verified: B is past the budget
	} {
		st := storetest.New(t)
		job := Job{Key: store.JobKey{Kernel: "sgemm", SpecHash: "t", Problem: p.String(), Device: k.Device()}, Problem: p, Evaluator: k, Space: sp}
		for i := range trials {
			trials[i].At = time.Unix(int64(i), 0)
		}
		if _, err := st.AddTrials(job.Key, trials); err != nil {
			t.Fatal(err)
		}
		tn := New(Config{Store: st, Signer: signer(t), Candidates: tc.candidates,
			NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewRandom(s, seed) }})
		res, err := tn.Certify(context.Background(), job, 1)
		if err != nil {
			t.Fatal(err)
		}
		sv, _, _ := st.Served(job.Key)
		var got []string
		for _, f := range sv.Front {
			got = append(got, f.Key)
			if f.Certificate == "" {
				t.Errorf("front point %s uncertified", f.Key)
			}
		}
		if res.Served != right[0] || strings.Join(got, " ") != strings.Join(tc.front, " ") || len(res.Rejected) != 1 || res.Rejected[0] != wrong {
			t.Errorf("candidates %d: served %s, front %v, rejected %v; want %s, %v, [%s]", tc.candidates, res.Served, got, res.Rejected, right[0], tc.front, wrong)
		}
		if tc.candidates != 64 {
			continue
		}
		// Later, N (fastest) and M join the front. With budget for one
		// verification, N is verified and served, M is left off, and A and
		// B, certified before, stay on it.
		// M also dominates B (certified): left off, it must not hide B.
		more := []store.Trial{
			{Key: right[3], Status: "ok", TimeMS: 0.9, EnergyMJ: 110, Cycle: 2, At: time.Unix(10, 0)},
			{Key: right[4], Status: "ok", TimeMS: 1.15, EnergyMJ: 65, Cycle: 2, At: time.Unix(11, 0)},
		}
		if _, err := st.AddTrials(job.Key, more); err != nil {
			t.Fatal(err)
		}
		tn = New(Config{Store: st, Signer: signer(t), Candidates: 1,
			NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewRandom(s, seed) }})
		if res, err = tn.Certify(context.Background(), job, 2); err != nil {
			t.Fatal(err)
		}
		sv, _, _ = st.Served(job.Key)
		got = nil
		for _, f := range sv.Front {
			got = append(got, f.Key)
		}
		if want := []string{right[3], right[0], right[1]}; res.Served != right[3] || strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("budget of 1 after the front was certified: served %s, front %v; want %s, %v", res.Served, got, right[3], want)
		}
	}
}
