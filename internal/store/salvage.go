package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// SalvageReport is what Salvage copied and what it lost.
type SalvageReport struct {
	From, To string
	Copied   map[string]int // records copied, by top-level bucket
	Lost     map[string]int // records that did not decode, by top-level bucket
	// Corrupt names every record counted in Lost.
	Corrupt []Corruption
	// Unreadable are the parts of the file bbolt could not read (a bad or
	// missing page): whatever they held is lost and cannot be counted.
	Unreadable []string
}

// Buckets returns the names of the buckets in Copied or Lost, sorted.
func (r *SalvageReport) Buckets() []string {
	seen := map[string]bool{}
	for b := range r.Copied {
		seen[b] = true
	}
	for b := range r.Lost {
		seen[b] = true
	}
	out := make([]string, 0, len(seen))
	for b := range seen {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}

// Salvage copies every readable record of the state file at from into a
// new state file at to, which must not exist, and reports what it copied
// and lost. from is opened read-only and never written. Records are copied
// byte for byte under their keys (trial and cycle numbers, sequences and
// certificate ids stay as they were) once they decode; the indexes (trial
// config keys, each job's certificates, the job registry) are rebuilt from
// what was copied. A record that does not decode, and a part of the file
// bbolt cannot read, is reported and skipped.
func Salvage(from, to string, opt Options) (*SalvageReport, error) {
	if _, err := os.Lstat(to); err == nil {
		return nil, fmt.Errorf("salvage to %s: %w: the file exists; name a new file", to, ErrInvalid)
	}
	if _, err := os.Stat(from); err != nil {
		return nil, fmt.Errorf("salvage %s: %w", from, err)
	}
	// No free list preload: salvage reads, and a damaged free list must
	// not stop it.
	src, err := openBolt(from, &bolt.Options{Timeout: opt.lockTimeout(), ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("salvage %s: nothing can be read: %w", from, openError(from, err))
	}
	defer src.Close()
	dst, err := Open(to, Options{LockTimeout: opt.LockTimeout, CheckTimeout: -1})
	if err != nil {
		return nil, fmt.Errorf("salvage to %s: %w", to, err)
	}
	rep := &SalvageReport{From: from, To: to, Copied: map[string]int{}, Lost: map[string]int{}}
	err = src.View(func(stx *bolt.Tx) error {
		return dst.update(func(dtx *bolt.Tx) error {
			return copyRecords(stx, dtx, rep)
		})
	})
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(to)
		return nil, fmt.Errorf("salvage %s to %s: %w", from, to, err)
	}
	return rep, nil
}

// copyRecords copies the readable records of stx into the empty current
// schema of dtx, rebuilding the indexes.
func copyRecords(stx, dtx *bolt.Tx, rep *SalvageReport) error {
	droot, err := root(dtx)
	if err != nil {
		return err
	}
	jobs := map[string]bool{}         // every job with a copied record
	jobRecs := map[string]jobRecord{} // job records copied
	var (
		specs, tops = droot.Bucket(bucketSpecs), map[string]*bolt.Bucket{}
	)
	for _, n := range [][]byte{bucketPolicies, bucketServed, bucketCerts, bucketRevocations} {
		tops[string(n)] = droot.Bucket(n)
	}
	jobSub := func(top []byte, job string) (*bolt.Bucket, error) {
		return droot.Bucket(top).CreateBucketIfNotExists([]byte(job))
	}
	maxSeq := func(b *bolt.Bucket, seq uint64, key []byte) error {
		if len(key) == 8 {
			seq = max(seq, binary.BigEndian.Uint64(key))
		}
		if seq > b.Sequence() {
			return b.SetSequence(seq)
		}
		return nil
	}
	copyOne := func(r rawRecord) error {
		if r.err != nil {
			rep.Lost[r.bucket]++
			rep.Corrupt = append(rep.Corrupt, Corruption{Bucket: r.bucket, Where: r.where, Err: r.err})
			return nil
		}
		val := append([]byte{}, r.value...)
		switch r.bucket {
		case string(bucketSpecs):
			b, err := specs.CreateBucketIfNotExists([]byte(r.job))
			if err != nil {
				return err
			}
			if err := b.Put(r.key, val); err != nil {
				return err
			}
		case string(bucketJobs):
			rec := r.rec.(jobRecord)
			job := JobKey{Kernel: rec.Kernel, SpecHash: rec.SpecHash, Problem: rec.Problem, Device: rec.Device}
			if job.String() != string(r.key) {
				rep.Lost[r.bucket]++
				rep.Corrupt = append(rep.Corrupt, Corruption{Bucket: r.bucket, Where: r.where, Err: fmt.Errorf("decode %s: %w: record names job %q", r.where, ErrCorrupt, job.String())})
				return nil
			}
			jobRecs[string(r.key)] = rec // written, and counted, after the rest
			return nil
		case string(bucketTrials):
			jb, err := jobSub(bucketTrials, r.job)
			if err != nil {
				return err
			}
			seqs, err := jb.CreateBucketIfNotExists(bucketTrialSeq)
			if err != nil {
				return err
			}
			keys, err := jb.CreateBucketIfNotExists(bucketTrialKeys)
			if err != nil {
				return err
			}
			tr := r.rec.(Trial)
			if seqs.Get(r.key) != nil || (tr.Key != "" && keys.Get([]byte(tr.Key)) != nil) {
				return nil // read twice (a damaged page can be referenced twice): copied already
			}
			if len(r.key) != 8 || tr.Key == "" {
				rep.Lost[r.bucket]++
				rep.Corrupt = append(rep.Corrupt, Corruption{Bucket: r.bucket, Where: r.where, Err: fmt.Errorf("%s: %w: bad sequence key or empty config key", r.where, ErrCorrupt)})
				return nil
			}
			if err := seqs.Put(r.key, val); err != nil {
				return err
			}
			if err := keys.Put([]byte(tr.Key), append([]byte{}, r.key...)); err != nil {
				return err
			}
			if err := maxSeq(seqs, r.seq, r.key); err != nil {
				return err
			}
			jobs[r.job] = true
		case string(bucketCycles), string(bucketObservations):
			b, err := jobSub([]byte(r.bucket), r.job)
			if err != nil {
				return err
			}
			if b.Get(r.key) != nil {
				return nil // read twice: copied already
			}
			if err := b.Put(r.key, val); err != nil {
				return err
			}
			seqKey := r.key
			if r.bucket == string(bucketObservations) && len(r.key) == 16 {
				seqKey = r.key[8:]
			}
			if err := maxSeq(b, r.seq, seqKey); err != nil {
				return err
			}
			jobs[r.job] = true
		case string(bucketPolicies), string(bucketServed):
			if err := checkJobName(r.key); err != nil {
				rep.Lost[r.bucket]++
				rep.Corrupt = append(rep.Corrupt, Corruption{Bucket: r.bucket, Where: r.where, Err: err})
				return nil
			}
			if err := tops[r.bucket].Put(r.key, val); err != nil {
				return err
			}
			jobs[string(r.key)] = true
		case string(bucketCerts):
			_, meta, err := certFromRecord(r.value, r.key)
			if err != nil {
				rep.Lost[r.bucket]++
				rep.Corrupt = append(rep.Corrupt, Corruption{Bucket: r.bucket, Where: r.where, Err: err})
				return nil
			}
			if err := tops[r.bucket].Put(r.key, val); err != nil {
				return err
			}
			jb, err := jobSub(bucketJobCerts, meta.Job.String())
			if err != nil {
				return err
			}
			if err := jb.Put(append([]byte{}, r.key...), []byte{}); err != nil {
				return err
			}
			jobs[meta.Job.String()] = true
		case string(bucketRevocations):
			if err := tops[r.bucket].Put(r.key, val); err != nil {
				return err
			}
		}
		rep.Copied[r.bucket]++
		return nil
	}
	var v int
	err = safely(func() error {
		var err error
		v, err = readVersion(stx)
		return err
	})
	switch {
	case err != nil:
		// The records may still be there: read them as the current schema.
		rep.Unreadable = append(rep.Unreadable, fmt.Sprintf("schema version: %v", err))
	case v == 0:
		// No root bucket (its name damaged): visitRecords reports it.
	case v != len(migrations):
		return fmt.Errorf("schema version %d; salvage reads version %d only: open the file with this quasimd first to migrate it", v, len(migrations))
	}
	err = visitRecords(stx, copyOne, func(where string, err error) {
		if errors.Is(err, ErrDamaged) {
			rep.Unreadable = append(rep.Unreadable, fmt.Sprintf("%s: %v", where, err))
			return
		}
		b := topName(where)
		rep.Lost[b]++
		rep.Corrupt = append(rep.Corrupt, Corruption{Bucket: b, Where: where, Err: err})
	})
	if err != nil {
		return err
	}
	// The job registry: each job with a copied record, with its own record
	// where that was readable.
	djobs := droot.Bucket(bucketJobs)
	now := time.Now()
	for job := range jobs {
		created := firstRecordTime(droot, []byte(job), now)
		if rec, ok := jobRecs[job]; ok {
			created = rec.Created
			rep.Copied[string(bucketJobs)]++
		}
		k, err := ParseJobKey(job)
		if err != nil {
			return err
		}
		if err := putJob(djobs, k, created); err != nil {
			return err
		}
	}
	for job := range jobRecs {
		if !jobs[job] {
			rep.Copied[string(bucketJobs)]++ // a job without records keeps nothing but its registration
			k, _ := ParseJobKey(job)
			if err := putJob(djobs, k, jobRecs[job].Created); err != nil {
				return err
			}
		}
	}
	return nil
}
