package tuner

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
	"github.com/quasim/quasim/internal/strategies"
)

func portfolioTuner(st *store.Store) *Tuner {
	f, _ := strategies.Get(strategies.Default)
	tu := newTuner(st)
	tu.cfg.NewStrategy = f
	return tu
}

// Ten consecutive cycles of a builtin kernel with the daemon's default
// strategy record, each, how many of its evaluations each portfolio member
// proposed; and the split follows the payoff and moves from cycle to
// cycle: on a replayed recording, a member proposing the slowest configs
// gets a third of the members' evaluations beside es (0.66 to es when this
// was written; a uniform-random allocator gave 0.53 and round robin 0.50,
// and both fail). On the small reduce space the optimum is found in the
// first cycles, after which no member makes a new best and the default
// bandit (rewarding new bests) splits evenly.
func TestCyclesRecordAllocation(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	const evals = 12
	distinct := map[string]bool{}
	for i := range 10 {
		cy, err := portfolioTuner(st).Cycle(context.Background(), job, Budget{Evals: evals}, "cron", uint64(i+1), nil)
		if err != nil {
			t.Fatalf("cycle %d: %v", i+1, err)
		}
		want := evals
		if i == 0 {
			want-- // the default is measured first, by no member
		}
		sum := 0
		for _, n := range cy.Allocation {
			sum += n
		}
		if sum != want {
			t.Errorf("cycle %d allocation %v sums to %d, want %d", cy.ID, cy.Allocation, sum, want)
		}
		stored, _ := st.Cycles(job.Key)
		if got := stored[len(stored)-1].Allocation; !maps.Equal(got, cy.Allocation) {
			t.Errorf("cycle %d stored allocation %v, returned %v", cy.ID, got, cy.Allocation)
		}
		t.Logf("cycle %d: %v", cy.ID, cy.Allocation)
	}
	// The split follows the payoff: beside es, a member that proposes the
	// slowest configs of the recording first gets few evaluations over 10
	// cycles. A uniform allocator gives it about half.
	job = syntheticReplayJob(t)
	rec := job.Evaluator.(*replay.Recording)
	var worst []genome.Config
	for _, c := range job.Space.All() {
		if tr, ok := rec.Trial(job.Space.Key(c)); ok && tr.OK() {
			worst = append(worst, c)
		}
	}
	slices.SortStableFunc(worst, func(a, b genome.Config) int {
		ta, _ := rec.Trial(job.Space.Key(a))
		tb, _ := rec.Trial(job.Space.Key(b))
		return cmp.Compare(tb.Time, ta.Time)
	})
	members := []evolve.Member{
		{Name: "es", New: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewES(s, seed, evolve.ESOptions{}) }},
		{Name: "worst", New: func(s *genome.Space, _ uint64) evolve.Strategy { return evolve.NewRanked(s, worst) }},
	}
	tu := newTuner(st)
	tu.cfg.NewStrategy = func(s *genome.Space, seed uint64) evolve.Strategy {
		return evolve.NewPortfolio(s, seed, members, evolve.PortfolioOptions{})
	}
	total := map[string]int{}
	for i := range 10 {
		cy, err := tu.Cycle(context.Background(), job, Budget{Evals: evals}, "cron", uint64(i+1), nil)
		if err != nil {
			t.Fatalf("replay cycle %d: %v", i+1, err)
		}
		for k, n := range cy.Allocation {
			total[k] += n
		}
		distinct[fmt.Sprint(cy.Allocation)] = true
	}
	if len(distinct) < 3 {
		t.Errorf("only %d different allocations over 10 cycles: the bandit does not adapt", len(distinct))
	}
	share := float64(total["es"]) / float64(total["es"]+total["worst"])
	t.Logf("replay, 10 cycles: %v, es share %.2f", total, share)
	if share < 0.6 {
		t.Errorf("es got %.2f of the members' evaluations beside a member proposing the slowest configs: the bandit does not follow the payoff", share)
	}
}

// A new job warm-starts from the same kernel's trials on another device:
// its first proposal after the default is the config ranked best there.
func TestNewJobWarmStarts(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	_, want := tuneOtherDevice(t, st, job)
	cy, err := portfolioTuner(st).Cycle(context.Background(), job, Budget{Evals: 2}, "start", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.Trials(job.Key)
	if want == job.Space.Key(job.Default) {
		t.Skip("the other device's best is the default, measured first anyway")
	}
	if len(got) != 2 || got[1].Key != want {
		t.Fatalf("trials %v, want the default then %s", got, want)
	}
	if cy.Allocation[evolve.DesignName] != 1 {
		t.Errorf("allocation %v, want the warm config under %q", cy.Allocation, evolve.DesignName)
	}
}

// Trials from outside the store (another node of a fleet, through
// Config.Related) warm-start a new job as the store's own do.
func TestNewJobWarmStartsFromRelated(t *testing.T) {
	elsewhere := storetest.New(t)
	job := reduceJob(t)
	trials, want := tuneOtherDevice(t, elsewhere, job)
	if want == job.Space.Key(job.Default) {
		t.Skip("the other node's best is the default, measured first anyway")
	}
	st := storetest.New(t)
	tu := portfolioTuner(st)
	tu.cfg.Related = func(j Job) map[string][]store.Trial {
		if j.Key != job.Key {
			t.Errorf("Related(%s), want %s", j.Key, job.Key)
		}
		return map[string][]store.Trial{"fleet:node|other-gpu": trials}
	}
	if _, err := tu.Cycle(context.Background(), job, Budget{Evals: 2}, "start", 1, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := st.Trials(job.Key)
	if len(got) != 2 || got[1].Key != want {
		t.Fatalf("trials %v, want the default then %s", got, want)
	}
}

// tuneOtherDevice runs a cycle of job on another device class in st and
// returns that job's trials and the key of the config rank transfer puts
// first for job.
func tuneOtherDevice(t *testing.T, st *store.Store, job Job) ([]store.Trial, string) {
	t.Helper()
	other := job
	other.Key.Device = "other-gpu"
	if _, err := portfolioTuner(st).Cycle(context.Background(), other, Budget{Evals: 30}, "cron", 1, nil); err != nil {
		t.Fatal(err)
	}
	trials, _ := st.Trials(other.Key)
	var src evolve.Source
	for _, tr := range trials {
		c, err := job.Space.ParseKey(tr.Key)
		if err != nil {
			t.Fatal(err)
		}
		src.Results = append(src.Results, evolve.Result{Config: c, OK: tr.Status == string(evaluate.StatusOK), Value: tr.TimeMS})
	}
	return trials, job.Space.Key(evolve.RankTransfer(job.Space, []evolve.Source{src})[0])
}

// Warm-start priors come from the most trusted tier that has any: a prior
// pack before the store's trials, the store's before the fleet's; the
// store keeps which one a job started from.
func TestWarmStartTiers(t *testing.T) {
	job := reduceJob(t)
	elsewhere := storetest.New(t)
	fleetTrials, _ := tuneOtherDevice(t, elsewhere, job)
	// The pack ranks first a config that is neither the default nor the
	// store's best (synthetic ranking).
	var packFirst genome.Config
	for _, c := range job.Space.All() {
		if !c.Equal(job.Default) {
			packFirst = c
			break
		}
	}
	pack := []evolve.Source{{Name: "pack:other-gpu", Results: []evolve.Result{{Config: packFirst, OK: true, Value: 0}}}}
	for _, tc := range []struct {
		name             string
		pack, storeFirst bool
		want             string
	}{
		{"pack", true, true, PriorPack},
		{"store", false, true, PriorStore},
		{"fleet", false, false, PriorFleet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storetest.New(t)
			wantKey := ""
			if tc.storeFirst {
				_, wantKey = tuneOtherDevice(t, st, job)
			}
			tu := portfolioTuner(st)
			if tc.pack {
				tu.cfg.Priors = func(Job) []evolve.Source { return pack }
				wantKey = job.Space.Key(packFirst)
			}
			tu.cfg.Related = func(Job) map[string][]store.Trial {
				return map[string][]store.Trial{"fleet:node|other-gpu": fleetTrials}
			}
			if _, err := tu.Cycle(context.Background(), job, Budget{Evals: 2}, "start", 1, nil); err != nil {
				t.Fatal(err)
			}
			p, ok, err := st.Prior(job.Key)
			if err != nil || !ok || p.From != tc.want {
				t.Fatalf("prior %+v, %v, %v; want from %s", p, ok, err, tc.want)
			}
			if got, _ := st.Trials(job.Key); wantKey != "" && (len(got) != 2 || got[1].Key != wantKey) {
				t.Errorf("trials %v, want the default then %s", got, wantKey)
			}
		})
	}
}
