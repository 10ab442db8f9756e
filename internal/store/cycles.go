package store

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// NewCycle stores cy as job's next cycle, with the ID it assigns from the
// job's cycle sequence (1, 2, ...), and returns it. In the same transaction
// it applies the job's retention: the newest Options.CyclesKept cycles are
// kept, older ones deleted, and the trials are compacted (see
// Options.TrialTimesKept).
func (s *Store) NewCycle(job JobKey, cy Cycle) (Cycle, error) {
	if err := job.validate(); err != nil {
		return Cycle{}, fmt.Errorf("new cycle %q: %w", job.String(), err)
	}
	err := s.update(func(tx *bolt.Tx) error {
		b, err := createJobBucket(tx, bucketCycles, job)
		if err != nil {
			return err
		}
		id, err := b.NextSequence()
		if err != nil {
			return err
		}
		cy.ID = int(id)
		data, err := encode(&cycleRecord{V: recordVersion, Cycle: cy})
		if err != nil {
			return err
		}
		if err := b.Put(u64(id), data); err != nil {
			return err
		}
		return s.retain(tx, job, b)
	})
	if err != nil {
		return Cycle{}, fmt.Errorf("new cycle %q: %w", job.String(), err)
	}
	return cy, nil
}

// PutCycle replaces job's cycle cy.ID, which must exist (ErrNotFound).
func (s *Store) PutCycle(job JobKey, cy Cycle) error {
	err := s.update(func(tx *bolt.Tx) error {
		return putCycle(tx, job, cy)
	})
	if err != nil {
		return fmt.Errorf("put cycle %q %d: %w", job.String(), cy.ID, err)
	}
	return nil
}

// putCycle replaces job's existing cycle cy.ID in tx.
func putCycle(tx *bolt.Tx, job JobKey, cy Cycle) error {
	b, err := jobBucket(tx, bucketCycles, job)
	if err != nil {
		return err
	}
	if b == nil || cy.ID <= 0 || b.Get(u64(uint64(cy.ID))) == nil {
		return fmt.Errorf("cycle %d: %w", cy.ID, ErrNotFound)
	}
	data, err := encode(&cycleRecord{V: recordVersion, Cycle: cy})
	if err != nil {
		return fmt.Errorf("cycle %d: %w", cy.ID, err)
	}
	return b.Put(u64(uint64(cy.ID)), data)
}

// Cycles returns job's cycles by ID ascending. A cycle that does not
// decode is skipped and reported to Options.OnCorrupt.
func (s *Store) Cycles(job JobKey) ([]Cycle, error) {
	out := []Cycle{}
	err := s.view(func(tx *bolt.Tx) error {
		b, err := jobBucket(tx, bucketCycles, job)
		if err != nil || b == nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			where := path(string(bucketRoot), string(bucketCycles), quoted(job.String()), quoted(string(k)))
			id, err := decodeU64(k, where)
			if err != nil {
				s.corrupt(bucketCycles, where, err)
				return nil
			}
			where = path(string(bucketRoot), string(bucketCycles), quoted(job.String()), numbered(id))
			cy, err := decodeCycle(v, where)
			if err != nil {
				s.corrupt(bucketCycles, where, err)
				return nil
			}
			out = append(out, cy)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list cycles %q: %w", job.String(), err)
	}
	return out, nil
}

// PutServed replaces the config job serves.
func (s *Store) PutServed(job JobKey, sv Served) error {
	if err := job.validate(); err != nil {
		return fmt.Errorf("put served %q: %w", job.String(), err)
	}
	err := s.update(func(tx *bolt.Tx) error {
		return putServed(tx, job, sv)
	})
	if err != nil {
		return fmt.Errorf("put served %q: %w", job.String(), err)
	}
	return nil
}

// putServed replaces the config job serves in tx. A revoked certificate,
// of the served config or of a point of its front, is ErrInvalid.
func putServed(tx *bolt.Tx, job JobKey, sv Served) error {
	b, err := top(tx, bucketServed)
	if err != nil {
		return err
	}
	revs, err := top(tx, bucketRevocations)
	if err != nil {
		return err
	}
	for _, id := range append([]string{sv.Certificate}, frontCerts(sv.Front)...) {
		if id != "" && revs.Get([]byte(id)) != nil {
			return fmt.Errorf("certificate %q is revoked: %w", id, ErrInvalid)
		}
	}
	if err := registerJob(tx, job); err != nil {
		return err
	}
	data, err := encode(&servedRecord{V: recordVersion, Served: sv})
	if err != nil {
		return err
	}
	return b.Put([]byte(job.String()), data)
}

func frontCerts(f []FrontPoint) []string {
	out := make([]string, len(f))
	for i, p := range f {
		out[i] = p.Certificate
	}
	return out
}

// ClearServed removes the served config of a job (it then falls back to its default); no error if none.
func (s *Store) ClearServed(job JobKey) error {
	err := s.update(func(tx *bolt.Tx) error {
		b, err := top(tx, bucketServed)
		if err != nil {
			return err
		}
		return b.Delete([]byte(job.String()))
	})
	if err != nil {
		return fmt.Errorf("clear served %q: %w", job.String(), err)
	}
	return nil
}

// getServed reads the config job serves in tx, and whether it serves one.
func getServed(tx *bolt.Tx, job JobKey) (Served, bool, error) {
	b, err := top(tx, bucketServed)
	if err != nil {
		return Served{}, false, err
	}
	v := b.Get([]byte(job.String()))
	if v == nil {
		return Served{}, false, nil
	}
	sv, err := decodeServed(v, path(string(bucketRoot), string(bucketServed), quoted(job.String())))
	return sv, err == nil, err
}

// Served returns the config job serves, and whether it serves one. A
// served record that does not decode serves nothing (the job falls back
// to its default until a promotion replaces it) and is reported to
// Options.OnCorrupt.
func (s *Store) Served(job JobKey) (Served, bool, error) {
	var (
		sv Served
		ok bool
	)
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		sv, ok, err = getServed(tx, job)
		if errors.Is(err, ErrCorrupt) {
			s.corrupt(bucketServed, path(string(bucketRoot), string(bucketServed), quoted(job.String())), err)
			return nil
		}
		return err
	})
	if err != nil {
		return Served{}, false, fmt.Errorf("get served %q: %w", job.String(), err)
	}
	return sv, ok, nil
}

// DefaultCyclesKept is how many cycles of a job NewCycle keeps when
// Options.CyclesKept is zero: at a cycle a day, more than half a year.
const DefaultCyclesKept = 200

// DefaultTrialTimesKept is how many of a job's ok trials keep their
// repetition times when Options.TrialTimesKept is zero: the fastest ones,
// the candidates a certification may take.
const DefaultTrialTimesKept = 64

func (o Options) cyclesKept() int {
	if o.CyclesKept == 0 {
		return DefaultCyclesKept
	}
	return o.CyclesKept
}

func (o Options) trialTimesKept() int {
	if o.TrialTimesKept == 0 {
		return DefaultTrialTimesKept
	}
	return o.TrialTimesKept
}

// retain applies the job's retention in tx, at the start of a cycle:
// the cycle bucket b keeps its newest cyclesKept cycles, and the job's
// trials are compacted (compactTrials).
func (s *Store) retain(tx *bolt.Tx, job JobKey, b *bolt.Bucket) error {
	if keep := s.opt.cyclesKept(); keep > 0 {
		// Counted by cursor: Stats does not see this transaction's writes.
		var keys [][]byte
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			keys = append(keys, append([]byte{}, k...))
		}
		for _, k := range keys[:max(0, len(keys)-keep)] {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
	}
	if keep := s.opt.trialTimesKept(); keep > 0 {
		return compactTrials(tx, job, keep)
	}
	return nil
}
