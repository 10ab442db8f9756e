package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// rawRecord is one record of the schema as visitRecords reads it. value is
// bbolt's memory, valid only in the transaction.
type rawRecord struct {
	bucket string // top-level bucket
	job    string // job key of a job-scoped record; spec name in specs
	key    []byte // the record's key in its bucket
	value  []byte
	seq    uint64 // sequence of the bucket holding the record
	where  string
	rec    any   // the decoded record; nil when err is set
	err    error // why the record does not decode (ErrCorrupt)
}

// visitRecords calls fn for every record of the schema in tx: specs, jobs,
// trials (their seq buckets), policies, served, cycles, observations,
// certs, revocations, spans, experiments, zonings, reports and fleet. The indexes (trials' keys, jobcerts) are derived
// and not visited. A bucket that cannot be read, or is not where the
// schema puts it, is reported to problem and skipped; reading goes on with
// the next one. fn's error stops the visit.
func visitRecords(tx *bolt.Tx, fn func(rawRecord) error, problem func(where string, err error)) error {
	var r *bolt.Bucket
	if err := safely(func() error { r = tx.Bucket(bucketRoot); return nil }); err != nil {
		problem(string(bucketRoot), fmt.Errorf("unreadable: %w", err))
		return nil
	}
	if r == nil {
		problem(string(bucketRoot), fmt.Errorf("%w: root bucket missing", ErrCorrupt))
		return nil
	}
	for _, name := range [][]byte{bucketSpecs, bucketJobs, bucketTrials, bucketPolicies, bucketServed, bucketCycles, bucketObservations, bucketCerts, bucketRevocations, bucketSpans, bucketExperiments, bucketZonings, bucketReports, bucketFleet} {
		var t *bolt.Bucket
		where := path(string(bucketRoot), string(name))
		if err := safely(func() error { t = r.Bucket(name); return nil }); err != nil {
			problem(where, fmt.Errorf("unreadable: %w", err))
			continue
		}
		if t == nil {
			problem(where, fmt.Errorf("%w: bucket missing", ErrCorrupt))
			continue
		}
		if err := visitTop(t, string(name), fn, problem); err != nil {
			return err
		}
	}
	return nil
}

// visitTop visits the records of the top-level bucket t named name.
func visitTop(t *bolt.Bucket, name string, fn func(rawRecord) error, problem func(string, error)) error {
	top := path(string(bucketRoot), name)
	flat := func(decodeFn func(k, v []byte, where string) (any, error), job string) func(b *bolt.Bucket, bwhere string) error {
		return func(b *bolt.Bucket, bwhere string) error {
			seq := b.Sequence()
			return scan(b, bwhere, problem, func(k, v []byte) error {
				where := path(bwhere, keyName(name, k))
				if v == nil {
					problem(where, fmt.Errorf("%w: a bucket where a record belongs", ErrCorrupt))
					return nil
				}
				rec, err := decodeFn(k, v, where)
				return fn(rawRecord{bucket: name, job: job, key: k, value: v, seq: seq, where: where, rec: rec, err: err})
			})
		}
	}
	// perJob visits the buckets under t, one per job (or spec name), with each.
	perJob := func(each func(job string) func(b *bolt.Bucket, bwhere string) error, sub []byte) error {
		return scan(t, top, problem, func(k, v []byte) error {
			where := path(top, quoted(string(k)))
			if v != nil {
				problem(where, fmt.Errorf("%w: a record where a bucket belongs", ErrCorrupt))
				return nil
			}
			b := t.Bucket(k)
			if sub != nil {
				if b = b.Bucket(sub); b == nil {
					return nil // a job whose trials bucket holds none yet
				}
				where = path(where, string(sub))
			}
			if name != string(bucketSpecs) && name != string(bucketSpans) && name != string(bucketExperiments) {
				if err := checkJobName(k); err != nil {
					problem(where, err)
					return nil
				}
			}
			return each(string(k))(b, where)
		})
	}
	switch name {
	case string(bucketSpecs):
		return perJob(func(spec string) func(*bolt.Bucket, string) error {
			return flat(func(_, v []byte, where string) (any, error) {
				sp, err := decodeSpec(v, where)
				if err == nil && sp.Name != spec {
					err = fmt.Errorf("decode %s: %w: record names spec %q", where, ErrCorrupt, sp.Name)
				}
				return sp, err
			}, spec)
		}, nil)
	case string(bucketJobs):
		return flat(func(_, v []byte, where string) (any, error) { return decodeJob(v, where) }, "")(t, top)
	case string(bucketTrials):
		return perJob(func(job string) func(*bolt.Bucket, string) error {
			return flat(func(_, v []byte, where string) (any, error) { return decodeTrial(v, where) }, job)
		}, bucketTrialSeq)
	case string(bucketPolicies):
		return scan(t, top, problem, func(k, v []byte) error {
			where := path(top, quoted(string(k)))
			if v == nil {
				problem(where, fmt.Errorf("%w: a bucket where a policy belongs", ErrCorrupt))
				return nil
			}
			if err := checkJobName(k); err != nil {
				problem(where, err)
				return nil
			}
			return fn(rawRecord{bucket: name, job: string(k), key: k, value: v, where: where, rec: bytes.Clone(v)})
		})
	case string(bucketServed):
		return flat(func(_, v []byte, where string) (any, error) { return decodeServed(v, where) }, "")(t, top)
	case string(bucketCycles):
		return perJob(func(job string) func(*bolt.Bucket, string) error {
			return flat(func(_, v []byte, where string) (any, error) { return decodeCycle(v, where) }, job)
		}, nil)
	case string(bucketObservations):
		return perJob(func(job string) func(*bolt.Bucket, string) error {
			return flat(func(_, v []byte, where string) (any, error) { return decodeObservation(v, where) }, job)
		}, nil)
	case string(bucketSpans):
		return perJob(func(pipeline string) func(*bolt.Bucket, string) error {
			return flat(func(k, v []byte, where string) (any, error) { return decodeSpanRecord(k, v, where) }, pipeline)
		}, nil)
	case string(bucketExperiments):
		return perJob(func(pipeline string) func(*bolt.Bucket, string) error {
			return flat(func(_, v []byte, where string) (any, error) { return decodeExperiment(v, where) }, pipeline)
		}, nil)
	case string(bucketZonings):
		return flat(func(k, v []byte, where string) (any, error) { return decodeZoning(k, v, where) }, "")(t, top)
	case string(bucketReports):
		return flat(func(k, v []byte, where string) (any, error) { return decodeReport(k, v, where) }, "")(t, top)
	case string(bucketFleet):
		return flat(decodeFleet, "")(t, top)
	case string(bucketCerts):
		return flat(func(_, v []byte, where string) (any, error) { return decodeCert(v, where) }, "")(t, top)
	case string(bucketRevocations):
		return flat(func(_, v []byte, where string) (any, error) { return decodeRevocation(v, where) }, "")(t, top)
	}
	return nil
}

// scan calls fn for every key and value of b, behind safely: when a page
// of b cannot be read, the rest of b is reported lost to problem and scan
// returns nil, so the caller goes on with the next bucket. fn's own error
// is returned.
func scan(b *bolt.Bucket, where string, problem func(string, error), fn func(k, v []byte) error) error {
	var (
		last  []byte
		fnErr error
	)
	err := safely(func() error {
		size := b.Tx().Size()
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			// A damaged page can give lengths no sound file has.
			if len(k) > bolt.MaxKeySize || int64(len(v)) > size {
				return fmt.Errorf("%w: key of %d bytes, value of %d, in a file of %d", ErrDamaged, len(k), len(v), size)
			}
			last = append(last[:0], k...)
			if fnErr = fn(k, v); fnErr != nil {
				return fnErr
			}
		}
		return nil
	})
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil && last == nil:
		problem(where, fmt.Errorf("unreadable: %w", err))
	case err != nil:
		problem(where, fmt.Errorf("unreadable after key %q: %w", last, err))
	}
	return nil
}

// keyName writes a record's key k of top-level bucket name as errors do.
func keyName(name string, k []byte) string {
	switch {
	case (name == string(bucketTrials) || name == string(bucketCycles) || name == string(bucketExperiments)) && len(k) == 8:
		return numbered(binary.BigEndian.Uint64(k))
	case name == string(bucketObservations):
		return fmt.Sprintf("%x", k)
	case name == string(bucketSpans) && len(k) == 12:
		return numbered(binary.BigEndian.Uint64(k[:8])) + "/n=" + strconv.FormatUint(uint64(binary.BigEndian.Uint32(k[8:])), 10)
	}
	return quoted(string(k))
}

// checkJobName reports whether k is a job key as the store writes them: one
// that parses and is valid UTF-8 (the job registry is JSON, which cannot
// hold other bytes).
func checkJobName(k []byte) error {
	if !utf8.Valid(k) {
		return fmt.Errorf("%w: job key %q is not UTF-8", ErrCorrupt, k)
	}
	if _, err := ParseJobKey(string(k)); err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return nil
}
