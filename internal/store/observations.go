package store

import (
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// AddObservation stores o for job, keyed by o.At and a sequence number, so
// observations with equal times are all kept.
func (s *Store) AddObservation(job JobKey, o Observation) error {
	if err := job.validate(); err != nil {
		return fmt.Errorf("add observation %q: %w", job.String(), err)
	}
	err := s.update(func(tx *bolt.Tx) error {
		data, err := encode(&observationRecord{V: recordVersion, Observation: o})
		if err != nil {
			return err
		}
		b, err := createJobBucket(tx, bucketObservations, job)
		if err != nil {
			return err
		}
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		return b.Put(observationKey(o.At, seq), data)
	})
	if err != nil {
		return fmt.Errorf("add observation %q: %w", job.String(), err)
	}
	return nil
}

// AddObservations stores obs for job in one transaction and then drops
// the oldest of job's observations beyond keep (keep <= 0 keeps all).
func (s *Store) AddObservations(job JobKey, obs []Observation, keep int) error {
	if err := job.validate(); err != nil {
		return fmt.Errorf("add observations %q: %w", job.String(), err)
	}
	err := s.update(func(tx *bolt.Tx) error {
		b, err := createJobBucket(tx, bucketObservations, job)
		if err != nil {
			return err
		}
		for _, o := range obs {
			data, err := encode(&observationRecord{V: recordVersion, Observation: o})
			if err != nil {
				return err
			}
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			if err := b.Put(observationKey(o.At, seq), data); err != nil {
				return err
			}
		}
		if keep <= 0 {
			return nil
		}
		n := 0
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			n++
		}
		var old [][]byte
		for k, _ := c.First(); k != nil && n-len(old) > keep; k, _ = c.Next() {
			old = append(old, slices.Clone(k))
		}
		for _, k := range old {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add observations %q: %w", job.String(), err)
	}
	return nil
}

// Observations returns job's observations oldest first: the newest limit of
// them, or all when limit <= 0. Equal times keep insertion order. An
// observation that does not decode is skipped and reported to
// Options.OnCorrupt.
func (s *Store) Observations(job JobKey, limit int) ([]Observation, error) {
	out := []Observation{}
	err := s.view(func(tx *bolt.Tx) error {
		b, err := jobBucket(tx, bucketObservations, job)
		if err != nil || b == nil {
			return err
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
			where := path(string(bucketRoot), string(bucketObservations), quoted(job.String()), fmt.Sprintf("%x", k))
			o, err := decodeObservation(v, where)
			if err != nil {
				s.corrupt(bucketObservations, where, err)
				continue
			}
			out = append(out, o)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list observations %q: %w", job.String(), err)
	}
	slices.Reverse(out)
	return out, nil
}
