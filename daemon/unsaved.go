package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/quasim/quasim/internal/store"
)

// A cycle can end while the store refuses writes (a full disk): its record
// on disk then still says running, or is missing when the store could not
// even create it. The scheduler keeps such records in memory, where the
// cycles listing shows them at once, writes a job's kept records before its
// next cycle starts, and tries them all again every unsavedRetry, so that
// the file is right once space returns.

// unsavedRetry is how often kept cycle records are written again, and
// maxUnsaved how many a job keeps.
const (
	unsavedRetry = 2 * time.Second
	maxUnsaved   = 64
)

// notOpened is the record of a run that failed before the tuner opened a
// cycle for it (it could not read the store), so that it shows and ends.
func (s *scheduler) notOpened(req runRequest, err error) store.Cycle {
	now := s.clock()
	return store.Cycle{
		Trigger: req.trigger, State: "failed", Started: now, Ended: now,
		Budget: req.budget.Evals, BudgetS: req.budget.Seconds, Budgeted: req.budget.Why, Error: err.Error(),
	}
}

// settle keeps cy in memory unless the store holds it as it ended.
func (s *scheduler) settle(j *job, cy store.Cycle) {
	if cy.ID > 0 {
		if cycles, err := s.st.Cycles(j.key); err == nil {
			for _, c := range cycles {
				if c.ID == cy.ID && sameEnd(c, cy) {
					return
				}
			}
		}
	}
	s.mu.Lock()
	i := slices.IndexFunc(j.unsaved, func(c store.Cycle) bool { return cy.ID > 0 && c.ID == cy.ID })
	if i >= 0 {
		j.unsaved[i] = cy
	} else {
		j.unsaved = append(j.unsaved, cy)
	}
	if len(j.unsaved) > maxUnsaved {
		// Past the bound, the oldest record of a cycle the store never
		// created goes: one that exists must be written, or it would be
		// resumed as running.
		if i := slices.IndexFunc(j.unsaved, func(c store.Cycle) bool { return c.ID == 0 }); i >= 0 {
			j.unsaved = slices.Delete(j.unsaved, i, i+1)
		}
	}
	s.mu.Unlock()
	s.log.Warn().Str("job_id", j.key.String()).Int("cycle", cy.ID).Str("state", cy.State).
		Msg("cycle record not in the state file; kept in memory and written once the file takes writes again")
}

// sameEnd reports whether stored record a says what b says of the cycle's end.
func sameEnd(a, b store.Cycle) bool {
	return a.State == b.State && a.Ended.Equal(b.Ended) && a.Evals == b.Evals && a.Error == b.Error
}

// flush writes j's kept cycle records, oldest first; it stops at the first
// the store refuses.
func (s *scheduler) flush(j *job) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	for {
		s.mu.Lock()
		if len(j.unsaved) == 0 {
			s.mu.Unlock()
			return nil
		}
		cy := j.unsaved[0]
		s.mu.Unlock()
		var err error
		if cy.ID > 0 {
			err = s.st.PutCycle(j.key, cy)
		} else {
			var stored store.Cycle
			stored, err = s.st.NewCycle(j.key, cy)
			cy.ID = stored.ID
		}
		if errors.Is(err, store.ErrNotFound) {
			s.log.Warn().Err(err).Str("job_id", j.key.String()).Int("cycle", cy.ID).Msg("kept cycle record dropped: its cycle is no longer stored")
			err = nil
		}
		if err != nil {
			return fmt.Errorf("write kept record of cycle %d: %w", cy.ID, err)
		}
		s.mu.Lock()
		j.unsaved = j.unsaved[1:] // only settle adds, at the end or in place
		s.mu.Unlock()
		s.log.Info().Str("job_id", j.key.String()).Int("cycle", cy.ID).Str("state", cy.State).Msg("kept cycle record written to the state file")
	}
}

// retryUnsaved writes the kept records of every job each retryEvery
// (default unsavedRetry) until ctx is done.
func (s *scheduler) retryUnsaved(ctx context.Context) {
	t := time.NewTicker(cmp.Or(s.retryEvery, unsavedRetry))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		var js []*job
		for _, j := range s.jobs {
			if len(j.unsaved) > 0 {
				js = append(js, j)
			}
		}
		for _, j := range s.draining {
			if len(j.unsaved) > 0 {
				js = append(js, j)
			}
		}
		s.mu.Unlock()
		for _, j := range js {
			if err := s.flush(j); err != nil {
				s.log.Debug().Err(err).Str("job_id", j.key.String()).Msg("state file still refuses writes")
				break
			}
		}
	}
}

// unsavedOf returns j's kept records, for listings.
func (s *scheduler) unsavedOf(j *job) []store.Cycle {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(j.unsaved)
}

// withUnsaved lays kept records over the stored cycles: a kept record
// replaces the stored one of its ID, and one the store never created gets
// the next ID after those shown, the one the store will give it. It
// returns which IDs are kept ones.
func withUnsaved(stored, kept []store.Cycle) ([]store.Cycle, map[int]bool) {
	out := slices.Clone(stored)
	ids := map[int]bool{}
	next := 1
	if n := len(out); n > 0 {
		next = out[n-1].ID + 1
	}
	for _, k := range kept {
		if k.ID == 0 {
			k.ID = next
			next++
			out = append(out, k)
			ids[k.ID] = true
			continue
		}
		if i := slices.IndexFunc(out, func(c store.Cycle) bool { return c.ID == k.ID }); i >= 0 {
			out[i] = k
			ids[k.ID] = true
		}
	}
	return out, ids
}
