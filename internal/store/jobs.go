package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Jobs returns every job with any record, sorted by JobKey.String.
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
				return err
			}
			job := JobKey{Kernel: rec.Kernel, SpecHash: rec.SpecHash, Problem: rec.Problem, Device: rec.Device}
			if job.String() != string(k) {
				return fmt.Errorf("decode %s: %w: record names job %q", where, ErrCorrupt, job.String())
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
