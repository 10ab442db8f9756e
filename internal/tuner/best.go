package tuner

import (
	"fmt"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/internal/store"
)

// passedBest is the best trial of cycle that still stands: status ok and
// not in failed. "" when none does.
func (j Job) passedBest(trials []store.Trial, cycle int, failed map[string]bool) (string, float64) {
	key, ms, best := "", 0.0, 0.0
	for _, tr := range trials {
		if tr.Cycle != cycle || tr.Status != string(evaluate.StatusOK) || failed[tr.Key] {
			continue
		}
		if v, ok := j.value(tr.TimeMS, tr.EnergyMJ); ok && (key == "" || v < best) {
			key, ms, best = tr.Key, tr.TimeMS, v
		}
	}
	return key, ms
}

// rebest names, in every stored cycle of job whose best is among failed,
// the best trial of that cycle that still stands: a config that failed its
// checks is never a cycle's best.
func (t *Tuner) rebest(job Job, trials []store.Trial, failed map[string]bool) error {
	if len(failed) == 0 {
		return nil
	}
	cycles, err := t.cfg.Store.Cycles(job.Key)
	if err != nil {
		return err
	}
	for _, cy := range cycles {
		if cy.BestKey == "" || !failed[cy.BestKey] {
			continue
		}
		cy.BestKey, cy.BestMS = job.passedBest(trials, cy.ID, failed)
		if err := t.cfg.Store.PutCycle(job.Key, cy); err != nil {
			return fmt.Errorf("cycle %d's best: %w", cy.ID, err)
		}
	}
	return nil
}
