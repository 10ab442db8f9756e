package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Bucket and key names; doc.go draws the tree they make.
var (
	bucketRoot         = []byte("v1")
	keyVersion         = []byte("version")
	bucketSpecs        = []byte("specs")
	bucketJobs         = []byte("jobs")
	bucketTrials       = []byte("trials")
	bucketTrialSeq     = []byte("seq")
	bucketTrialKeys    = []byte("keys")
	bucketPolicies     = []byte("policies")
	bucketServed       = []byte("served")
	bucketCycles       = []byte("cycles")
	bucketObservations = []byte("observations")
	bucketCerts        = []byte("certs")
	bucketRevocations  = []byte("revocations")
	bucketJobCerts     = []byte("jobcerts")
	bucketSpans        = []byte("spans")
)

// jobKeySep separates the fields of JobKey.String.
const jobKeySep = "|"

// JobKey names a job: a kernel spec version at one problem size on one
// device class.
type JobKey struct {
	Kernel, SpecHash, Problem, Device string
}

// String returns kernel|specHash|problem|device, the name of the job's
// buckets.
func (k JobKey) String() string {
	return k.Kernel + jobKeySep + k.SpecHash + jobKeySep + k.Problem + jobKeySep + k.Device
}

// ParseJobKey is the inverse of JobKey.String. It fails, with ErrInvalid, on
// a wrong number of fields or an empty kernel.
func ParseJobKey(s string) (JobKey, error) {
	f := strings.Split(s, jobKeySep)
	if len(f) != 4 {
		return JobKey{}, fmt.Errorf("parse job key %q: %d fields, want 4: %w", s, len(f), ErrInvalid)
	}
	if f[0] == "" {
		return JobKey{}, fmt.Errorf("parse job key %q: empty kernel: %w", s, ErrInvalid)
	}
	return JobKey{Kernel: f[0], SpecHash: f[1], Problem: f[2], Device: f[3]}, nil
}

// validate reports whether k can name stored records: its String must parse
// back to k.
func (k JobKey) validate() error {
	if k.Kernel == "" {
		return fmt.Errorf("job key %q: empty kernel: %w", k.String(), ErrInvalid)
	}
	for _, f := range [...]string{k.Kernel, k.SpecHash, k.Problem, k.Device} {
		if strings.Contains(f, jobKeySep) {
			return fmt.Errorf("job key %q: field %q contains %q: %w", k.String(), f, jobKeySep, ErrInvalid)
		}
	}
	return nil
}

// u64 encodes n as an 8-byte big-endian key.
func u64(n uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), n)
}

// decodeU64 decodes an 8-byte big-endian key or value; where names it in
// the error.
func decodeU64(b []byte, where string) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("decode %s: %w: %d bytes, want 8", where, ErrCorrupt, len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

var (
	minNanoTime = time.Unix(0, math.MinInt64)
	maxNanoTime = time.Unix(0, math.MaxInt64)
)

// observationKey is the key of an observation at t with sequence seq: t in
// Unix nanoseconds with the sign bit flipped (so earlier sorts first, also
// before 1970; clamped outside what int64 nanoseconds hold), then seq.
func observationKey(t time.Time, seq uint64) []byte {
	var n int64
	switch {
	case t.Before(minNanoTime):
		n = math.MinInt64
	case t.After(maxNanoTime):
		n = math.MaxInt64
	default:
		n = t.UnixNano()
	}
	k := make([]byte, 0, 16)
	k = binary.BigEndian.AppendUint64(k, uint64(n)^(1<<63))
	return binary.BigEndian.AppendUint64(k, seq)
}

// path names a bucket or key for error messages: fixed names as they are,
// variable ones (job keys, config keys, spec names) quoted.
func path(parts ...string) string {
	return strings.Join(parts, "/")
}

// quoted formats a variable path element.
func quoted(s string) string { return strconv.Quote(s) }

// numbered formats a numeric key as a path element.
func numbered(v uint64) string { return strconv.FormatUint(v, 10) }
