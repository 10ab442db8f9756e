package store

import (
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"runtime/debug"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DefaultCheckTimeout bounds the consistency check Open runs when
// Options.CheckTimeout is zero. Reading every page of a file of 100 MB
// takes well under a second; the bound only matters for huge files.
const DefaultCheckTimeout = 20 * time.Second

// Corruption is one stored record that does not decode. Listings skip it
// and report it to Options.OnCorrupt; Check and Salvage list them.
type Corruption struct {
	Bucket string // top-level bucket: trials, cycles, specs ...
	Where  string // the record's full path, as in errors
	Err    error
}

// Report is what a consistency check found.
type Report struct {
	Path     string
	Size     int64         // bytes of the file
	Buckets  int           // buckets walked
	Keys     int           // keys read
	Took     time.Duration // time the check took
	Complete bool          // false when the time bound cut the walk short
	// Problems are damage to the file's structure (pages, free list,
	// truncation): a file with any is refused by Open and must be salvaged.
	Problems []string
	// Corrupt are records whose bytes bbolt reads but quasim cannot
	// decode; each costs only itself.
	Corrupt []Corruption
}

// Damaged reports whether the file's structure is damaged.
func (r *Report) Damaged() bool { return len(r.Problems) > 0 }

// damagedError is the error Open returns for a damaged file: it says what is
// wrong and how to recover.
func (r *Report) damagedError() error {
	const max = 5
	probs := r.Problems
	more := ""
	if len(probs) > max {
		more = fmt.Sprintf(" (and %d more)", len(probs)-max)
		probs = probs[:max]
	}
	return fmt.Errorf("%w: %d problem(s)%s: %v; the file was not written to. "+
		"Stop quasimd, run `quasimctl db salvage --db %s --to NEW` (or `quasimd db salvage`) to copy every readable record into NEW, "+
		"then keep the damaged file aside and move NEW to %s", ErrDamaged, len(r.Problems), more, probs, r.Path, r.Path)
}

// safely runs fn, turning a panic, and a memory fault on a page of a
// truncated or damaged file, into an error wrapping ErrDamaged. bbolt panics
// on some corrupt pages; mmapped pages past the end of a truncated file
// fault.
func safely(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: bbolt: %v", ErrDamaged, p)
		}
	}()
	return fn()
}

// openBolt is bolt.Open behind safely: bbolt panics in Open on a damaged
// free list. The file stays open (and locked) when it panics, until the
// process exits: bbolt returns no handle to close.
func openBolt(path string, o *bolt.Options) (db *bolt.DB, err error) {
	err = safely(func() error {
		var err error
		db, err = bolt.Open(path, fileMode, o)
		return err
	})
	return db, err
}

// CheckFile checks the state file at path without writing to it: first
// its pages, read plainly (checkPages), then, through a read-only bbolt
// handle (which waits opt.LockTimeout for a running quasimd to let go of
// the file), every key and record and bbolt's own tx.Check, all within
// opt.CheckTimeout. Damage is in the report, not the error; the error is
// for a file that cannot be opened (missing, locked).
func CheckFile(path string, opt Options) (*Report, error) {
	start := time.Now()
	deadline := start.Add(opt.checkTimeout())
	// The shared lock first: the pages of a file a quasimd is writing are
	// not worth reading.
	lf, err := os.Open(path)
	if err != nil {
		return nil, openPath(path, err)
	}
	defer lf.Close()
	if err := flockShared(lf, opt.lockTimeout()); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	rep := &Report{Path: path, Size: fileSize(path), Complete: true}
	probs, complete, err := checkPages(path, deadline)
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", path, err)
	}
	rep.Problems, rep.Complete = probs, complete
	if rep.Damaged() || !complete { // bbolt reads only pages checked first
		rep.Took = time.Since(start)
		return rep, nil
	}
	db, err := openReadOnly(path, opt)
	if errors.Is(err, ErrDamaged) {
		rep.Problems = append(rep.Problems, err.Error())
		rep.Took = time.Since(start)
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	defer db.Close()
	check(db, rep, deadline)
	rep.Took = time.Since(start)
	return rep, nil
}

// openReadOnly opens path read-only with its free list loaded, so that a
// check reads everything in the caller's goroutine.
func openReadOnly(path string, opt Options) (*bolt.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, openPath(path, err)
	}
	db, err := openBolt(path, &bolt.Options{Timeout: opt.lockTimeout(), ReadOnly: true, PreLoadFreelist: true})
	if err != nil {
		return nil, openError(path, err)
	}
	return db, nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// check reads db's keys and records until deadline and adds what it found
// to rep. checkPages has passed, so bbolt reads sound pages; the walk still
// runs behind safely, and before bbolt's own tx.Check (which runs in a
// goroutine of its own, where a fault cannot be caught).
func check(db *bolt.DB, rep *Report, deadline time.Time) {
	err := db.View(func(tx *bolt.Tx) error {
		if hw := tx.Size(); hw > rep.Size {
			rep.Problems = append(rep.Problems, fmt.Sprintf("file is %d bytes but its pages reach %d bytes: truncated", rep.Size, hw))
			return nil
		}
		err := safely(func() error { return walk(tx, rep, deadline) })
		if err != nil {
			rep.Problems = append(rep.Problems, err.Error())
			return nil
		}
		if !rep.Complete {
			return nil
		}
		for err := range tx.Check() {
			rep.Problems = append(rep.Problems, err.Error())
		}
		return nil
	})
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
}

// errDeadline stops a walk at its time bound.
var errDeadline = errors.New("check time bound reached")

// walk reads every key and value of every bucket in tx, decodes every
// record of the schema, and stops (rep.Complete = false) at deadline.
func walk(tx *bolt.Tx, rep *Report, deadline time.Time) error {
	var sum uint32
	var visit func(b *bolt.Bucket, trail []string) error
	visit = func(b *bolt.Bucket, trail []string) error {
		rep.Buckets++
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			rep.Keys++
			if rep.Keys%1024 == 1 && time.Now().After(deadline) {
				return errDeadline
			}
			if v == nil {
				sub := b.Bucket(k)
				if sub == nil {
					return fmt.Errorf("%w: %s: a nil value that is no bucket", ErrDamaged, path(append(trail, quoted(string(k)))...))
				}
				if err := visit(sub, append(trail, string(k))); err != nil {
					return err
				}
				continue
			}
			sum = crc32.Update(sum, crc32.IEEETable, v) // read every byte, overflow pages included
		}
		return nil
	}
	err := tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		return visit(b, []string{string(name)})
	})
	if errors.Is(err, errDeadline) {
		rep.Complete = false
		return nil
	}
	if err != nil {
		return err
	}
	_ = sum
	// Records are checked against the current schema only; an older file
	// is migrated by Open, and a bad version is Open's error to give.
	if v, err := readVersion(tx); err != nil || v != len(migrations) {
		return nil
	}
	return visitRecords(tx, func(r rawRecord) error {
		if r.err != nil {
			rep.Corrupt = append(rep.Corrupt, Corruption{Bucket: r.bucket, Where: r.where, Err: r.err})
		}
		return nil
	}, func(where string, err error) {
		if errors.Is(err, ErrDamaged) {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v", where, err))
			return
		}
		rep.Corrupt = append(rep.Corrupt, Corruption{Bucket: topName(where), Where: where, Err: err})
	})
}

// topName returns the top-level bucket of a path such as v1/trials/"job".
func topName(where string) string {
	parts := strings.SplitN(where, "/", 3)
	if len(parts) < 2 {
		return where
	}
	return parts[1]
}
