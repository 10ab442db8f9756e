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
	err := s.update(func(tx *bolt.Tx) error {
		if err := registerJob(tx, job); err != nil {
			return err
		}
		b, err := top(tx, bucketJobs)
		if err != nil {
			return err
		}
		k := []byte(job.String())
		where := path(string(bucketRoot), string(bucketJobs), quoted(job.String()))
		rec, err := decodeJob(b.Get(k), where)
		if err != nil {
			return err
		}
		if rec.RequestedBy != nil {
			return nil
		}
		r.At = r.At.UTC()
		rec.RequestedBy = &r
		data, err := encode(&rec)
		if err != nil {
			return err
		}
		return b.Put(k, data)
	})
	if err != nil {
		return fmt.Errorf("set requester of %s: %w", job, err)
	}
	return nil
}

// Requester returns who asked for job; ok is false when nobody is recorded
// (the job came from a spec, or the job is unknown).
func (s *Store) Requester(job JobKey) (r Requester, ok bool, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		b, err := top(tx, bucketJobs)
		if err != nil {
			return err
		}
		v := b.Get([]byte(job.String()))
		if v == nil {
			return nil
		}
		rec, err := decodeJob(v, path(string(bucketRoot), string(bucketJobs), quoted(job.String())))
		if err != nil || rec.RequestedBy == nil {
			return err
		}
		r, ok = *rec.RequestedBy, true
		return nil
	})
	if err != nil {
		return Requester{}, false, fmt.Errorf("requester of %s: %w", job, err)
	}
	return r, ok, nil
}
