package store

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Jobs returns every job with any record, sorted by JobKey.String. A job
// record that does not decode is skipped and reported to
// Options.OnCorrupt.
func (s *Store) Jobs() ([]JobKey, error) {
	out := []JobKey{}
	err := s.view(func(tx *bolt.Tx) error {
		b, err := top(tx, bucketJobs)
		if err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			where := path(string(bucketRoot), string(bucketJobs), quoted(string(k)))
			rec, err := decodeJob(v, where)
			if err != nil {
				s.corrupt(bucketJobs, where, err)
				return nil
			}
			job := JobKey{Kernel: rec.Kernel, SpecHash: rec.SpecHash, Problem: rec.Problem, Device: rec.Device}
			if job.String() != string(k) {
				s.corrupt(bucketJobs, where, fmt.Errorf("decode %s: %w: record names job %q", where, ErrCorrupt, job.String()))
				return nil
			}
			out = append(out, job)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return out, nil
}

// Requester is who asked for a job that a lookup added (tune_on_miss).
type Requester struct {
	UID  uint32    `json:"uid"`
	User string    `json:"user,omitempty"` // the uid's name when it had one
	At   time.Time `json:"at"`
}

// SetRequester records who asked for job, registering the job if needed;
// a job keeps the first requester recorded.
func (s *Store) SetRequester(job JobKey, r Requester) error {
	r.At = r.At.UTC()
	err := s.updateJob(job, func(rec *jobRecord) bool {
		if rec.RequestedBy != nil {
			return false
		}
		rec.RequestedBy = &r
		return true
	})
	if err != nil {
		return fmt.Errorf("set requester of %s: %w", job, err)
	}
	return nil
}

// Prior is what a job's warm start ranked its configs by.
type Prior struct {
	From    string    `json:"from"`    // the tier: "pack", "store" or "fleet"
	Sources []string  `json:"sources"` // the recordings or jobs it came from
	Ranked  int       `json:"ranked"`  // configs of the job's space it ranked
	At      time.Time `json:"at"`
}

// SetPrior records the prior job was warm-started from, registering the job
// if needed; a job keeps the first one (a warm start happens once).
func (s *Store) SetPrior(job JobKey, p Prior) error {
	p.At = p.At.UTC()
	err := s.updateJob(job, func(rec *jobRecord) bool {
		if rec.Prior != nil {
			return false
		}
		rec.Prior = &p
		return true
	})
	if err != nil {
		return fmt.Errorf("set prior of %s: %w", job, err)
	}
	return nil
}

// updateJob registers job if needed and writes its record back when edit
// changed it.
func (s *Store) updateJob(job JobKey, edit func(*jobRecord) bool) error {
	return s.update(func(tx *bolt.Tx) error {
		if err := registerJob(tx, job); err != nil {
			return err
		}
		b, err := top(tx, bucketJobs)
		if err != nil {
			return err
		}
		k := []byte(job.String())
		rec, err := decodeJob(b.Get(k), path(string(bucketRoot), string(bucketJobs), quoted(job.String())))
		if err != nil {
			return err
		}
		if !edit(&rec) {
			return nil
		}
		data, err := encode(&rec)
		if err != nil {
			return err
		}
		return b.Put(k, data)
	})
}

// Requester returns who asked for job; ok is false when nobody is recorded
// (the job came from a spec, or the job is unknown).
func (s *Store) Requester(job JobKey) (r Requester, ok bool, err error) {
	rec, err := s.jobRecord(job)
	if err != nil {
		return Requester{}, false, fmt.Errorf("requester of %s: %w", job, err)
	}
	if rec == nil || rec.RequestedBy == nil {
		return Requester{}, false, nil
	}
	return *rec.RequestedBy, true, nil
}

// Prior returns the prior job was warm-started from; ok is false when it
// started cold or is unknown.
func (s *Store) Prior(job JobKey) (p Prior, ok bool, err error) {
	rec, err := s.jobRecord(job)
	if err != nil {
		return Prior{}, false, fmt.Errorf("prior of %s: %w", job, err)
	}
	if rec == nil || rec.Prior == nil {
		return Prior{}, false, nil
	}
	return *rec.Prior, true, nil
}

// jobRecord reads job's record; nil when the job is unknown, or when its
// record does not decode, which is skipped and reported to
// Options.OnCorrupt as Jobs does: listings go on without it.
func (s *Store) jobRecord(job JobKey) (*jobRecord, error) {
	var out *jobRecord
	err := s.view(func(tx *bolt.Tx) error {
		b, err := top(tx, bucketJobs)
		if err != nil {
			return err
		}
		v := b.Get([]byte(job.String()))
		if v == nil {
			return nil
		}
		where := path(string(bucketRoot), string(bucketJobs), quoted(job.String()))
		rec, err := decodeJob(v, where)
		if err != nil {
			s.corrupt(bucketJobs, where, err)
			return nil
		}
		out = &rec
		return nil
	})
	return out, err
}
