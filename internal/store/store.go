package store

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// DefaultLockTimeout is how long Open waits for the file lock when
// Options.LockTimeout is zero.
const DefaultLockTimeout = 5 * time.Second

// fileMode is the mode of a new state file.
const fileMode = 0o600

// Options configure Open.
type Options struct {
	LockTimeout time.Duration // how long Open waits for the file lock (default 5s)
	ReadOnly    bool
	// CheckTimeout bounds the consistency check of Open (default
	// DefaultCheckTimeout); a negative value skips the check.
	CheckTimeout time.Duration
	// OnCorrupt, when set, is told of every record a listing skips
	// because it does not decode. It must be safe for concurrent use.
	OnCorrupt func(Corruption)
	// CyclesKept is how many cycles of a job NewCycle keeps, the newest
	// (default DefaultCyclesKept); a negative value keeps all.
	CyclesKept int
	// TrialTimesKept is how many of a job's ok trials, the fastest, keep
	// their repetition times (Trial.TimesMS) when NewCycle compacts the
	// job's trials (default DefaultTrialTimesKept); a negative value keeps
	// every trial's times.
	TrialTimesKept int
}

func (o Options) lockTimeout() time.Duration {
	if o.LockTimeout <= 0 {
		return DefaultLockTimeout
	}
	return o.LockTimeout
}

func (o Options) checkTimeout() time.Duration {
	if o.CheckTimeout == 0 {
		return DefaultCheckTimeout
	}
	return o.CheckTimeout
}

// Store is an open state file. Its methods are safe for concurrent use.
type Store struct {
	db       *bolt.DB
	path     string
	readOnly bool
	opt      Options
	report   *Report // the check of Open; nil when skipped
}

// testNoSync is set only by this package's own tests (export_test.go), to
// skip fsync; production stores always sync.
var testNoSync bool

// Open opens or creates the state file at path (mode 0600), checks it and
// runs the pending schema migrations in one Update transaction. It waits at
// most opt.LockTimeout for another process to release the file (ErrLocked),
// and refuses a file written by a newer schema (ErrSchemaTooNew). A
// read-only Open runs no migration: a file that needs one is ErrReadOnly.
//
// The check (see CheckFile) runs on a read-only handle before the file is
// opened for writing, so a damaged file is never written to: Open returns
// ErrDamaged with what is wrong and how to salvage it. Records that do not
// decode do not stop Open; CheckReport lists them.
func Open(path string, opt Options) (*Store, error) {
	return open(path, opt, testNoSync)
}

func open(path string, opt Options, noSync bool) (*Store, error) {
	var rep *Report
	if opt.checkTimeout() > 0 && fileSize(path) > 0 {
		var err error
		if rep, err = CheckFile(path, opt); err != nil {
			return nil, err
		}
		if rep.Damaged() {
			return nil, fmt.Errorf("open %s: %w", path, rep.damagedError())
		}
	}
	db, err := openBolt(path, &bolt.Options{
		Timeout:  opt.lockTimeout(),
		ReadOnly: opt.ReadOnly,
		NoSync:   noSync,
		// Growing a new file syncs it too (Salvage makes one, and
		// FuzzOpenDamaged a Salvage per input).
		NoGrowSync: noSync,
	})
	if err != nil {
		return nil, openError(path, err)
	}
	s := &Store{db: db, path: path, readOnly: opt.ReadOnly, opt: opt, report: rep}
	if err := s.upgrade(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return s, nil
}

// openError words an error of bolt.Open.
func openError(path string, err error) error {
	if errors.Is(err, bolterrors.ErrTimeout) {
		return fmt.Errorf("open %s: state file is locked by another process (is another quasimd running?): %w", path, ErrLocked)
	}
	if errors.Is(err, ErrDamaged) {
		return fmt.Errorf("open %s: %w", path, err)
	}
	// bbolt has no sentinel for a file shorter than its two meta pages.
	if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) ||
		strings.Contains(err.Error(), "file size too small") {
		return fmt.Errorf("open %s: %w: %v", path, ErrDamaged, err)
	}
	return openPath(path, err)
}

// openPath is err of opening path, with the path in front where err does
// not already name it (an *fs.PathError of path says "open PATH: ...").
func openPath(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return err
	}
	return fmt.Errorf("open %s: %w", path, err)
}

// CheckReport returns what the check of Open found, or nil when Open
// skipped it (a new file, or Options.CheckTimeout < 0).
func (s *Store) CheckReport() *Report { return s.report }

// corrupt tells Options.OnCorrupt of a record a listing skips.
func (s *Store) corrupt(bucket []byte, where string, err error) {
	if s.opt.OnCorrupt != nil {
		s.opt.OnCorrupt(Corruption{Bucket: string(bucket), Where: where, Err: err})
	}
}

// upgrade brings the schema up to date, writing only when a migration is due.
func (s *Store) upgrade() error {
	var cur int
	if err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		cur, err = readVersion(tx)
		return err
	}); err != nil {
		return err
	}
	switch want := len(migrations); {
	case cur > want:
		return fmt.Errorf("schema version %d is newer than this quasim knows (%d): %w", cur, want, ErrSchemaTooNew)
	case cur == want:
		return nil
	case s.readOnly:
		return fmt.Errorf("schema version %d needs migrating to %d, which a read-only open cannot do: %w", cur, want, ErrReadOnly)
	}
	return s.db.Update(migrate)
}

// Close closes the state file and releases its lock.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close %s: %w", s.path, err)
	}
	return nil
}

// Path returns the state file's path as given to Open.
func (s *Store) Path() string { return s.path }

// SchemaVersion returns the file's schema version.
func (s *Store) SchemaVersion() (int, error) {
	var v int
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		v, err = readVersion(tx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("schema version %s: %w", s.path, err)
	}
	return v, nil
}

// Check runs bbolt's consistency check (tx.Check) in a read transaction and
// returns every problem it finds, joined; nil when the file is clean.
func (s *Store) Check() error {
	var errs []error
	err := s.db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("check %s: %w", s.path, errors.Join(errs...))
	}
	return nil
}

// view runs fn in a read transaction.
func (s *Store) view(fn func(tx *bolt.Tx) error) error {
	return s.db.View(fn)
}

// update runs fn in a write transaction; it fails with ErrReadOnly on a
// read-only store.
func (s *Store) update(fn func(tx *bolt.Tx) error) error {
	if s.readOnly {
		return ErrReadOnly
	}
	return s.db.Update(fn)
}

// root returns the root bucket, which Open guarantees.
func root(tx *bolt.Tx) (*bolt.Bucket, error) {
	r := tx.Bucket(bucketRoot)
	if r == nil {
		return nil, fmt.Errorf("bucket %s: %w: missing", bucketRoot, ErrCorrupt)
	}
	return r, nil
}

// top returns the top-level bucket name under the root, which the
// migrations guarantee.
func top(tx *bolt.Tx, name []byte) (*bolt.Bucket, error) {
	r, err := root(tx)
	if err != nil {
		return nil, err
	}
	b := r.Bucket(name)
	if b == nil {
		return nil, fmt.Errorf("bucket %s: %w: missing", path(string(bucketRoot), string(name)), ErrCorrupt)
	}
	return b, nil
}

// jobBucket returns the job's bucket under the top-level bucket name, or nil
// when the job has none.
func jobBucket(tx *bolt.Tx, name []byte, job JobKey) (*bolt.Bucket, error) {
	t, err := top(tx, name)
	if err != nil {
		return nil, err
	}
	return t.Bucket([]byte(job.String())), nil
}

// createJobBucket returns the job's bucket under the top-level bucket name,
// creating it and registering the job when needed.
func createJobBucket(tx *bolt.Tx, name []byte, job JobKey) (*bolt.Bucket, error) {
	t, err := top(tx, name)
	if err != nil {
		return nil, err
	}
	if err := registerJob(tx, job); err != nil {
		return nil, err
	}
	b, err := t.CreateBucketIfNotExists([]byte(job.String()))
	if err != nil {
		return nil, fmt.Errorf("create bucket %s: %w", path(string(bucketRoot), string(name), quoted(job.String())), err)
	}
	return b, nil
}

// registerJob adds job, created now, to the jobs bucket unless it is there
// already.
func registerJob(tx *bolt.Tx, job JobKey) error {
	jobs, err := top(tx, bucketJobs)
	if err != nil {
		return err
	}
	return putJob(jobs, job, time.Now())
}

// putJob adds job to the jobs bucket b unless it is there already.
func putJob(b *bolt.Bucket, job JobKey, created time.Time) error {
	k := []byte(job.String())
	if b.Get(k) != nil {
		return nil
	}
	data, err := encode(&jobRecord{
		V:        recordVersion,
		Kernel:   job.Kernel,
		SpecHash: job.SpecHash,
		Problem:  job.Problem,
		Device:   job.Device,
		Created:  created.UTC(),
	})
	if err != nil {
		return err
	}
	return b.Put(k, data)
}

// get returns a copy of the value at key in b, and whether it exists (an
// empty value exists).
func get(b *bolt.Bucket, key []byte) ([]byte, bool) {
	if b == nil {
		return nil, false
	}
	k, v := b.Cursor().Seek(key)
	if k == nil || string(k) != string(key) {
		return nil, false
	}
	return append([]byte{}, v...), true
}
