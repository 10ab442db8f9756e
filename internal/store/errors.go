package store

import "errors"

var (
	// ErrNotFound is returned when a requested spec, cycle, certificate or
	// trial does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalid is returned when an argument cannot be stored: a malformed
	// job key, a trial without a config key, a value JSON cannot encode, a
	// certificate id stored before with other bytes.
	ErrInvalid = errors.New("invalid argument")
	// ErrReadOnly is returned by writes to a store opened with ReadOnly, and
	// by a read-only Open of a file whose schema needs a migration.
	ErrReadOnly = errors.New("store opened read-only")
)

var (
	// ErrLocked is returned by Open when another process holds the state
	// file's lock for longer than Options.LockTimeout.
	ErrLocked = errors.New("store locked")
	// ErrSchemaTooNew is returned by Open when the file's schema version is
	// newer than this binary knows.
	ErrSchemaTooNew = errors.New("store schema too new")
	// ErrCorrupt is returned when a stored value or key does not decode; the
	// error names the bucket and key.
	ErrCorrupt = errors.New("corrupt record")
	// ErrDamaged is returned by Open when the state file's structure is
	// damaged (truncated, a bad page, a bad free list): the file is not
	// written to, and its readable records can be copied out with Salvage.
	ErrDamaged = errors.New("state file damaged")
)
