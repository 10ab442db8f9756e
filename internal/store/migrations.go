package store

import (
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// migration brings a file from schema version-1 to version. migrate runs in
// the Update transaction of Open; the runner writes the version key after
// it.
type migration struct {
	version int
	migrate func(tx *bolt.Tx) error
}

// migrations, in order: the i-th has version i+1. A change of the bucket
// tree appends one here, with its test, and updates doc.go.
var migrations = []migration{
	{version: 1, migrate: createTree},
	{version: 2, migrate: backfillJobs},
	// certificates, their revocations and each job's index of them (a
	// schema-2 file has no certificate: nothing to backfill)
	{version: 3, migrate: createTops(bucketCerts, bucketRevocations, bucketJobCerts)},
	{version: 4, migrate: createTops(bucketSpans)},       // pipelines' spans
	{version: 5, migrate: createTops(bucketExperiments)}, // pipelines' perturbation experiments
	// zoned pipelines' tuned maps (quasimd kept them in memory before and
	// tuned them again at each start)
	{version: 6, migrate: createTops(bucketZonings)},
	// who reported that a certificate fails, and the fleet records this
	// node verified (both were kept in memory before, or not at all)
	{version: 7, migrate: createTops(bucketReports, bucketFleet)},
}

// migrate runs, in tx, every migration newer than the file's version.
func migrate(tx *bolt.Tx) error {
	cur, err := readVersion(tx)
	if err != nil {
		return err
	}
	if cur > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this quasim knows (%d): %w", cur, len(migrations), ErrSchemaTooNew)
	}
	for _, m := range migrations {
		if m.version <= cur {
			continue
		}
		if err := m.migrate(tx); err != nil {
			return fmt.Errorf("migrate to schema version %d: %w", m.version, err)
		}
		r, err := root(tx)
		if err != nil {
			return fmt.Errorf("migrate to schema version %d: %w", m.version, err)
		}
		if err := r.Put(keyVersion, []byte(strconv.Itoa(m.version))); err != nil {
			return fmt.Errorf("migrate to schema version %d: write version: %w", m.version, err)
		}
	}
	return nil
}

// readVersion returns the file's schema version: 0 for a file without the
// root bucket.
func readVersion(tx *bolt.Tx) (int, error) {
	r := tx.Bucket(bucketRoot)
	if r == nil {
		return 0, nil
	}
	where := path(string(bucketRoot), string(keyVersion))
	raw := r.Get(keyVersion)
	if raw == nil {
		return 0, fmt.Errorf("read %s: %w: missing", where, ErrCorrupt)
	}
	v, err := strconv.Atoi(string(raw))
	if err != nil || v < 1 {
		return 0, fmt.Errorf("read %s: %w: %q is not a schema version", where, ErrCorrupt, raw)
	}
	return v, nil
}

// createTree (version 1) creates the root bucket and the buckets of
// schema 1: specs, trials, policies, served, cycles, observations.
func createTree(tx *bolt.Tx) error {
	r, err := tx.CreateBucketIfNotExists(bucketRoot)
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", bucketRoot, err)
	}
	for _, name := range [][]byte{bucketSpecs, bucketTrials, bucketPolicies, bucketServed, bucketCycles, bucketObservations} {
		if _, err := r.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", path(string(bucketRoot), string(name)), err)
		}
	}
	return nil
}

// jobScoped are the top-level buckets whose children are named by job key.
var jobScoped = [][]byte{bucketTrials, bucketPolicies, bucketServed, bucketCycles, bucketObservations}

// backfillJobs (version 2) creates the jobs bucket and registers every job
// that has a record in a schema-1 bucket. A job's created time is the
// earliest of its first trial's At, its first cycle's Started and its first
// observation's At that decodes; the migration time when none does.
func backfillJobs(tx *bolt.Tx) error {
	r, err := root(tx)
	if err != nil {
		return err
	}
	jobs, err := r.CreateBucketIfNotExists(bucketJobs)
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", path(string(bucketRoot), string(bucketJobs)), err)
	}
	now := time.Now()
	for _, name := range jobScoped {
		t := r.Bucket(name)
		if t == nil {
			return fmt.Errorf("bucket %s: %w: missing", path(string(bucketRoot), string(name)), ErrCorrupt)
		}
		c := t.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			job, err := ParseJobKey(string(k))
			if err != nil {
				return fmt.Errorf("bucket %s: %w: %v", path(string(bucketRoot), string(name), quoted(string(k))), ErrCorrupt, err)
			}
			if err := putJob(jobs, job, firstRecordTime(r, k, now)); err != nil {
				return fmt.Errorf("register job %q: %w", k, err)
			}
		}
	}
	return nil
}

// firstRecordTime returns the earliest time of the first trial, cycle and
// observation of the job named jobKey in a schema-1 tree, or def.
func firstRecordTime(r *bolt.Bucket, jobKey []byte, def time.Time) time.Time {
	first := func(b *bolt.Bucket) []byte {
		if b == nil {
			return nil
		}
		_, v := b.Cursor().First()
		return v
	}
	sub := func(name []byte, more ...[]byte) *bolt.Bucket {
		b := r.Bucket(name)
		if b == nil {
			return nil
		}
		b = b.Bucket(jobKey)
		for _, m := range more {
			if b == nil {
				return nil
			}
			b = b.Bucket(m)
		}
		return b
	}
	var ts []time.Time
	if v := first(sub(bucketTrials, bucketTrialSeq)); v != nil {
		if tr, err := decodeTrial(v, ""); err == nil {
			ts = append(ts, tr.At)
		}
	}
	if v := first(sub(bucketCycles)); v != nil {
		if cy, err := decodeCycle(v, ""); err == nil {
			ts = append(ts, cy.Started)
		}
	}
	if v := first(sub(bucketObservations)); v != nil {
		if o, err := decodeObservation(v, ""); err == nil {
			ts = append(ts, o.At)
		}
	}
	best := time.Time{}
	for _, t := range ts {
		if !t.IsZero() && (best.IsZero() || t.Before(best)) {
			best = t
		}
	}
	if best.IsZero() {
		return def
	}
	return best
}

// createTops returns a migration that creates the top-level buckets
// names, empty: no earlier schema held their records.
func createTops(names ...[]byte) func(tx *bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		r, err := root(tx)
		if err != nil {
			return err
		}
		for _, name := range names {
			if _, err := r.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", path(string(bucketRoot), string(name)), err)
			}
		}
		return nil
	}
}
