package store

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketReports holds who reported that a certificate's config fails:
// reports/<cert id>/<reporter> (schema 7).
var bucketReports = []byte("reports")

// FaultReport is what one reporter said of one certificate's config: a local
// runtime (Reporter "uid:N") that saw an error above its certified bound,
// or a fleet node ("node:ID") whose verification of it failed. A
// reporter's later reports of the same certificate update its record:
// Count, Last, the largest Error and the latest Source and Reason.
type FaultReport struct {
	Cert     string    `json:"cert"`
	Job      string    `json:"job"` // JobKey.String() of the certificate's job
	Key      string    `json:"key"` // the config
	Reporter string    `json:"reporter"`
	Source   string    `json:"source,omitempty"` // what the runtime called itself
	Error    float64   `json:"error,omitempty"`  // the largest error reported
	Reason   string    `json:"reason,omitempty"` // a node's failed checks
	Count    int       `json:"count"`
	First    time.Time `json:"first"`
	Last     time.Time `json:"last"`
}

type reportRecord struct {
	V int `json:"v"`
	FaultReport
}

func (r *reportRecord) version() int { return r.V }

func reportKey(cert, reporter string) []byte { return []byte(cert + "/" + reporter) }

// decodeReport decodes a stored report; one whose certificate and reporter
// are not its key's is ErrCorrupt.
func decodeReport(key, data []byte, where string) (FaultReport, error) {
	var r reportRecord
	if err := decode(data, &r, where); err != nil {
		return FaultReport{}, err
	}
	if !bytes.Equal(key, reportKey(r.Cert, r.Reporter)) || r.Count < 1 {
		return FaultReport{}, fmt.Errorf("decode %s: %w: record names certificate %q, reporter %q, count %d", where, ErrCorrupt, r.Cert, r.Reporter, r.Count)
	}
	return r.FaultReport, nil
}

// AddReport records r, which stands for r.Count reports (at least 1) the
// last of them at r.Last (First is set from it), and
// returns the reporter's record of r.Cert as it now stands. A certificate
// keeps the reports of at most maxReporters reporters: past that, the one
// heard from least recently is dropped. A report without a certificate or
// reporter, or with a "/" in the certificate, is ErrInvalid.
func (s *Store) AddReport(r FaultReport, maxReporters int) (FaultReport, error) {
	switch {
	case r.Cert == "" || strings.Contains(r.Cert, "/") || r.Reporter == "":
		return FaultReport{}, fmt.Errorf("add report: %w: certificate %q, reporter %q", ErrInvalid, r.Cert, r.Reporter)
	case len(reportKey(r.Cert, r.Reporter)) > bolt.MaxKeySize:
		return FaultReport{}, fmt.Errorf("add report: %w: key of over %d bytes", ErrInvalid, bolt.MaxKeySize)
	}
	var out FaultReport
	err := s.update(func(tx *bolt.Tx) error {
		t, err := top(tx, bucketReports)
		if err != nil {
			return err
		}
		k := reportKey(r.Cert, r.Reporter)
		out = r
		out.Count, out.First = max(1, r.Count), r.Last
		if v, ok := get(t, k); ok {
			if old, err := decodeReport(k, v, reportWhere(k)); err == nil {
				out.Count, out.First = old.Count+max(1, r.Count), old.First
				out.Error = max(out.Error, old.Error)
				out.Source = cmpOr(out.Source, old.Source)
				out.Reason = cmpOr(out.Reason, old.Reason)
			}
		}
		data, err := encode(&reportRecord{V: recordVersion, FaultReport: out})
		if err != nil {
			return err
		}
		if err := t.Put(k, data); err != nil {
			return err
		}
		return dropOldReports(t, r.Cert, k, maxReporters)
	})
	if err != nil {
		return FaultReport{}, fmt.Errorf("add report of %s by %s: %w", r.Cert, r.Reporter, err)
	}
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// dropOldReports keeps cert's newest max reports, keep among them.
func dropOldReports(t *bolt.Bucket, cert string, keep []byte, maxReporters int) error {
	prefix := []byte(cert + "/")
	for {
		var (
			n      int
			oldest []byte
			at     time.Time
		)
		c := t.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			n++
			if v == nil || bytes.Equal(k, keep) {
				continue
			}
			r, err := decodeReport(k, v, reportWhere(k))
			if oldest == nil || err != nil || r.Last.Before(at) {
				oldest, at = bytes.Clone(k), r.Last
			}
		}
		if n <= max(1, maxReporters) || oldest == nil {
			return nil
		}
		if err := t.Delete(oldest); err != nil {
			return err
		}
	}
}

func reportWhere(k []byte) string {
	return path(string(bucketRoot), string(bucketReports), quoted(string(k)))
}

// Reports are the reports of certificate cert, by reporter. A record that
// does not decode is skipped and reported to Options.OnCorrupt.
func (s *Store) Reports(cert string) ([]FaultReport, error) {
	var out []FaultReport
	err := s.view(func(tx *bolt.Tx) error {
		t, err := top(tx, bucketReports)
		if err != nil {
			return err
		}
		prefix := []byte(cert + "/")
		c := t.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			r, err := decodeReport(k, v, reportWhere(k))
			if err != nil {
				s.corrupt(bucketReports, reportWhere(k), err)
				continue
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reports of %s: %w", cert, err)
	}
	return out, nil
}
