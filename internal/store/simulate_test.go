package store_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/quasim/quasim/internal/store"
)

// model is what a store should hold, kept by hand.
type model struct {
	trials   map[store.JobKey][]store.Trial
	keys     map[store.JobKey]map[string]bool
	policies map[store.JobKey][]byte
	cycles   map[store.JobKey][]store.Cycle
	jobs     map[store.JobKey]bool
}

// TestSimulatedCheckpoints runs many random generations of several jobs
// through Checkpoint, some of them failing, against a model; then closes,
// reopens and compares the store with the model.
func TestSimulatedCheckpoints(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	path := filepath.Join(t.TempDir(), "quasim.db")
	s, err := store.Open(path, store.Options{})
	must(t, err)

	jobs := []store.JobKey{jobA, jobB, jobC}
	m := model{
		trials:   map[store.JobKey][]store.Trial{},
		keys:     map[store.JobKey]map[string]bool{},
		policies: map[store.JobKey][]byte{},
		cycles:   map[store.JobKey][]store.Cycle{},
		jobs:     map[store.JobKey]bool{},
	}
	for _, job := range jobs {
		m.keys[job] = map[string]bool{}
	}
	const generations = 400
	for g := range generations {
		job := jobs[rng.IntN(len(jobs))]
		if rng.IntN(20) == 0 || len(m.cycles[job]) == 0 {
			cy, err := s.NewCycle(job, store.Cycle{Trigger: "cron", State: "running", Started: at(g), Budget: 50})
			must(t, err)
			m.cycles[job] = append(m.cycles[job], cy)
			m.jobs[job] = true
		}
		var trials []store.Trial
		for range rng.IntN(9) {
			k := fmt.Sprintf("%d,%d", rng.IntN(8), rng.IntN(8)) // 64 configs: duplicates happen
			trials = append(trials, store.Trial{Key: k, Status: "ok", TimeMS: rng.Float64() * 10, CostS: 0.1, At: at(g), Cycle: len(m.cycles[job])})
		}
		var policy []byte
		if rng.IntN(4) != 0 {
			policy = fmt.Appendf(nil, "gen %d of %s", g, job.String())
		}
		cy := m.cycles[job][len(m.cycles[job])-1]
		cy.Evals += len(trials)
		fail := rng.IntN(10) == 0
		if fail {
			cy.ID = 1000 + g // unknown: the whole generation rolls back
		}
		err := s.Checkpoint(job, trials, policy, &cy)
		if fail {
			if err == nil {
				t.Fatalf("generation %d: Checkpoint with unknown cycle succeeded", g)
			}
			continue
		}
		must(t, err)
		for _, tr := range trials {
			if !m.keys[job][tr.Key] {
				m.keys[job][tr.Key] = true
				m.trials[job] = append(m.trials[job], tr)
			}
		}
		if policy != nil {
			m.policies[job] = policy
		}
		m.cycles[job][len(m.cycles[job])-1] = cy
	}
	must(t, s.Close())

	s = openPath(t, path, store.Options{})
	must(t, s.Check())
	var wantJobs []store.JobKey
	for job := range m.jobs {
		wantJobs = append(wantJobs, job)
	}
	slices.SortFunc(wantJobs, func(a, b store.JobKey) int { return strings.Compare(a.String(), b.String()) })
	if got, err := s.Jobs(); err != nil || !reflect.DeepEqual(got, wantJobs) {
		t.Errorf("Jobs = %v, %v, want %v", got, err, wantJobs)
	}
	for _, job := range jobs {
		got, err := s.Trials(job)
		if err != nil || !reflect.DeepEqual(got, nonNil(m.trials[job])) {
			t.Errorf("Trials(%q): %d trials, %v; want the model's %d", job.String(), len(got), err, len(m.trials[job]))
		}
		p, ok, err := s.Policy(job)
		if want, wantOK := m.policies[job]; err != nil || ok != wantOK || string(p) != string(want) {
			t.Errorf("Policy(%q) = %q, %v, %v, want %q, %v", job.String(), p, ok, err, want, wantOK)
		}
		cys, err := s.Cycles(job)
		if err != nil || !reflect.DeepEqual(cys, nonNil(m.cycles[job])) {
			t.Errorf("Cycles(%q) = %+v, %v, want %+v", job.String(), cys, err, m.cycles[job])
		}
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
