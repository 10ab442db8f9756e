package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/quasim/quasim/internal/fileown"
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
// and lost. from is read with plain reads, page by page (the walker of
// checkPages, in salvage mode: bbolt itself would panic, fault or loop on
// the damaged pages), under a shared lock, and never written. Records are
// copied byte for byte under their keys (trial and cycle numbers,
// sequences and certificate ids stay as they were) once they decode; the
// indexes (trial config keys, each job's certificates, the job registry)
// are rebuilt from what was copied. A record that does not decode, and a
// page that cannot be read, is reported and skipped.
func Salvage(from, to string, opt Options) (*SalvageReport, error) {
	if _, err := os.Lstat(to); err == nil {
		return nil, fmt.Errorf("salvage to %s: %w: the file exists; name a new file", to, ErrInvalid)
	}
	f, err := os.Open(from)
	if err != nil {
		return nil, fmt.Errorf("salvage %s: %w", from, err)
	}
	defer f.Close()
	if err := flockShared(f, opt.lockTimeout()); err != nil {
		return nil, fmt.Errorf("salvage %s: %w", from, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("salvage %s: %w", from, err)
	}
	dst, err := Open(to, Options{LockTimeout: opt.LockTimeout, CheckTimeout: -1})
	if err != nil {
		return nil, fmt.Errorf("salvage to %s: %w", to, err)
	}
	rep := &SalvageReport{From: from, To: to, Copied: map[string]int{}, Lost: map[string]int{}}
	err = dst.update(func(dtx *bolt.Tx) error {
		return copyRecords(f, fi.Size(), dtx, rep)
	})
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// Salvage is run as root by hand: the new file takes the owner
		// and mode of the one it is to replace, or the service's user
		// could not open it.
		err = fileown.OwnerMode(to, from)
	}
	if err != nil {
		_ = os.Remove(to)
		return nil, fmt.Errorf("salvage %s to %s: %w", from, to, err)
	}
	return rep, nil
}

// flockShared takes a shared lock on f as bbolt's read-only open does,
// waiting at most timeout for a writer (a running quasimd) to let go.
func flockShared(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if err != syscall.EWOULDBLOCK {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("state file is locked by another process (is another quasimd running?): %w", ErrLocked)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// salvaged turns a value the walker found at trail (the bucket names above
// it), key k, into the record of the schema it is; false for the indexes
// (rebuilt) and the version key.
func salvaged(trail []string, k, v []byte, seq uint64) (rawRecord, bool, error) {
	if len(trail) < 2 || trail[0] != string(bucketRoot) {
		if len(trail) == 1 && trail[0] == string(bucketRoot) && string(k) == string(keyVersion) {
			return rawRecord{}, false, nil
		}
		where := path(append(slices.Clone(trail), quoted(string(k)))...)
		return rawRecord{where: where}, false, fmt.Errorf("%s: %w: not where the schema puts a record", where, ErrCorrupt)
	}
	name := trail[1]
	r := rawRecord{bucket: name, key: k, value: v, seq: seq}
	wherePath := slices.Clone(trail) // v1/name/"job or spec"/seq, as errors name them
	if len(wherePath) > 2 {
		wherePath[2] = quoted(wherePath[2])
	}
	r.where = path(append(wherePath, keyName(name, k))...)
	switch {
	case name == string(bucketSpecs) && len(trail) == 3:
		r.job = trail[2]
		sp, err := decodeSpec(v, r.where)
		if err == nil && sp.Name != r.job {
			err = fmt.Errorf("decode %s: %w: record names spec %q", r.where, ErrCorrupt, sp.Name)
		}
		r.rec, r.err = sp, err
	case name == string(bucketJobs) && len(trail) == 2:
		r.rec, r.err = decodeJob(v, r.where)
	case name == string(bucketTrials) && len(trail) == 4 && trail[3] == string(bucketTrialSeq):
		r.job = trail[2]
		r.rec, r.err = decodeTrial(v, r.where)
	case name == string(bucketTrials) && len(trail) == 4 && trail[3] == string(bucketTrialKeys),
		name == string(bucketJobCerts) && len(trail) == 3:
		return rawRecord{}, false, nil // indexes, rebuilt
	case name == string(bucketPolicies) && len(trail) == 2:
		r.job, r.rec = string(k), bytes.Clone(v)
	case name == string(bucketServed) && len(trail) == 2:
		r.rec, r.err = decodeServed(v, r.where)
	case name == string(bucketCycles) && len(trail) == 3:
		r.job = trail[2]
		r.rec, r.err = decodeCycle(v, r.where)
	case name == string(bucketObservations) && len(trail) == 3:
		r.job = trail[2]
		r.rec, r.err = decodeObservation(v, r.where)
	case name == string(bucketSpans) && len(trail) == 3:
		r.job = trail[2] // the pipeline
		r.rec, r.err = decodeSpanRecord(k, v, r.where)
	case name == string(bucketExperiments) && len(trail) == 3:
		r.job = trail[2] // the pipeline
		r.rec, r.err = decodeExperiment(v, r.where)
	case name == string(bucketZonings) && len(trail) == 2:
		r.rec, r.err = decodeZoning(k, v, r.where)
	case name == string(bucketReports) && len(trail) == 2:
		r.rec, r.err = decodeReport(k, v, r.where)
	case name == string(bucketFleet) && len(trail) == 2:
		r.rec, r.err = decodeFleet(k, v, r.where)
	case name == string(bucketCerts) && len(trail) == 2:
		r.rec, r.err = decodeCert(v, r.where)
	case name == string(bucketRevocations) && len(trail) == 2:
		r.rec, r.err = decodeRevocation(v, r.where)
	default:
		return r, false, fmt.Errorf("%s: %w: not where the schema puts a record", r.where, ErrCorrupt)
	}
	if r.job != "" && name != string(bucketSpecs) && name != string(bucketSpans) && name != string(bucketExperiments) {
		if err := checkJobName([]byte(r.job)); err != nil && r.err == nil {
			r.err = fmt.Errorf("%s: %w", r.where, err)
		}
	}
	return r, true, nil
}

// copyRecords copies the readable records of the file f, of size bytes,
// into the empty current schema of dtx, rebuilding the indexes.
func copyRecords(f io.ReaderAt, size int64, dtx *bolt.Tx, rep *SalvageReport) error {
	droot, err := root(dtx)
	if err != nil {
		return err
	}
	jobs := map[string]bool{}         // every job with a copied record
	jobRecs := map[string]jobRecord{} // job records copied
	var (
		specs, tops = droot.Bucket(bucketSpecs), map[string]*bolt.Bucket{}
	)
	for _, n := range [][]byte{bucketPolicies, bucketServed, bucketCerts, bucketRevocations, bucketZonings, bucketReports, bucketFleet} {
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
		case string(bucketCycles), string(bucketObservations), string(bucketSpans), string(bucketExperiments):
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
			switch {
			case r.bucket == string(bucketObservations) && len(r.key) == 16:
				seqKey = r.key[8:]
			case r.bucket == string(bucketSpans):
				seqKey = r.key[:8] // decodeSpanRecord checked it is 12 bytes
			}
			if err := maxSeq(b, r.seq, seqKey); err != nil {
				return err
			}
			if r.bucket != string(bucketSpans) && r.bucket != string(bucketExperiments) { // their buckets are named by a pipeline, not a job
				jobs[r.job] = true
			}
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
		case string(bucketRevocations), string(bucketZonings), string(bucketReports), string(bucketFleet):
			if err := tops[r.bucket].Put(r.key, val); err != nil {
				return err
			}
		}
		rep.Copied[r.bucket]++
		return nil
	}
	seqs := map[string]uint64{} // bucket trail -> its sequence
	var copyErr error
	w := &pageWalker{f: f, size: size, deadline: time.Now().Add(365 * 24 * time.Hour), seen: map[uint64]bool{}, salvage: true,
		bucket: func(trail []string, name []byte, seq uint64) {
			seqs[strings.Join(append(slices.Clone(trail), string(name)), "\x00")] = seq
		},
		value: func(trail []string, k, v []byte) {
			if copyErr != nil {
				return
			}
			r, ok, err := salvaged(trail, k, v, seqs[strings.Join(trail, "\x00")])
			switch {
			case err != nil:
				b := "root"
				if len(trail) > 1 {
					b = trail[1]
				}
				rep.Lost[b]++
				rep.Corrupt = append(rep.Corrupt, Corruption{Bucket: b, Where: r.where, Err: err})
			case ok:
				copyErr = copyOne(r)
			}
		},
	}
	w.run()
	if copyErr != nil {
		return copyErr
	}
	rep.Unreadable = append(rep.Unreadable, w.problems...)
	if w.unlisted > 0 {
		rep.Unreadable = append(rep.Unreadable, fmt.Sprintf("and %d more unreadable parts, not listed", w.unlisted))
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
