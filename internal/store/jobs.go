package store

import (
	"fmt"

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
