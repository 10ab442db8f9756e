package store

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// PutCert stores a certificate's signed bytes under its id and indexes it under the job; storing the same id again is
// a no-op if the bytes are equal and ErrInvalid if they differ. Empty id or body -> ErrInvalid.
//
// The store keeps body as it is, byte for byte; it never looks inside. Of
// meta it stores ID, Key, TimeMS and IssuedAt: meta.Job is ignored (job
// names the job) and so are the revocation fields (Revoke records a
// revocation). A second put of an id keeps the first put's metadata; one
// for another job than the first is ErrInvalid, even with equal bytes. The
// job is registered in the jobs bucket if this writes its first record.
func (s *Store) PutCert(job JobKey, meta CertMeta, body []byte) error {
	if err := job.validate(); err != nil {
		return fmt.Errorf("put certificate %q: %w", meta.ID, err)
	}
	if err := checkCert(meta, body); err != nil {
		return fmt.Errorf("put certificate %q: %w", meta.ID, err)
	}
	err := s.update(func(tx *bolt.Tx) error {
		return putCert(tx, job, meta, body)
	})
	if err != nil {
		return fmt.Errorf("put certificate %q: %w", meta.ID, err)
	}
	return nil
}

// Promote makes sv the config job serves under the certificate meta, body:
// it stores the certificate as PutCert does and the served record as
// PutServed does, in one transaction, so on any error neither is stored
// (a certificate that conflicts with a stored one leaves the served config
// as it was). sv.Certificate, when empty, is set to meta.ID; one that names
// another certificate, or an sv.Key that is not meta.Key, is ErrInvalid,
// and so is a certificate already revoked.
func (s *Store) Promote(job JobKey, sv Served, meta CertMeta, body []byte) error {
	if err := job.validate(); err != nil {
		return fmt.Errorf("promote %q: %w", job.String(), err)
	}
	if err := checkCert(meta, body); err != nil {
		return fmt.Errorf("promote %q: certificate %q: %w", job.String(), meta.ID, err)
	}
	if sv.Certificate == "" {
		sv.Certificate = meta.ID
	}
	if sv.Certificate != meta.ID {
		return fmt.Errorf("promote %q: served record names certificate %q, not %q: %w", job.String(), sv.Certificate, meta.ID, ErrInvalid)
	}
	if sv.Key != meta.Key {
		return fmt.Errorf("promote %q: served config %q is not the certified %q: %w", job.String(), sv.Key, meta.Key, ErrInvalid)
	}
	err := s.update(func(tx *bolt.Tx) error {
		if err := putCert(tx, job, meta, body); err != nil {
			return err
		}
		revs, err := top(tx, bucketRevocations)
		if err != nil {
			return err
		}
		if revs.Get([]byte(meta.ID)) != nil {
			return fmt.Errorf("certificate %q is revoked: %w", meta.ID, ErrInvalid)
		}
		return putServed(tx, job, sv)
	})
	if err != nil {
		return fmt.Errorf("promote %q: %w", job.String(), err)
	}
	return nil
}

// checkCert reports whether meta and body can be stored: a non-empty id
// short enough for a bbolt key, and a non-empty body.
func checkCert(meta CertMeta, body []byte) error {
	switch {
	case meta.ID == "":
		return fmt.Errorf("empty certificate id: %w", ErrInvalid)
	case len(meta.ID) > bolt.MaxKeySize:
		return fmt.Errorf("certificate id of %d bytes, at most %d: %w", len(meta.ID), bolt.MaxKeySize, ErrInvalid)
	case len(body) == 0:
		return fmt.Errorf("empty certificate body: %w", ErrInvalid)
	}
	return nil
}

// putCert stores the certificate in tx unless it is stored already, and
// indexes it under job; checkCert has accepted meta and body.
func putCert(tx *bolt.Tx, job JobKey, meta CertMeta, body []byte) error {
	certs, err := top(tx, bucketCerts)
	if err != nil {
		return err
	}
	index, err := top(tx, bucketJobCerts)
	if err != nil {
		return err
	}
	id := []byte(meta.ID)
	if v := certs.Get(id); v != nil {
		rec, old, err := certFromRecord(v, id)
		if err != nil {
			return err
		}
		if !bytes.Equal(rec.Body, body) {
			return fmt.Errorf("certificate %q is stored with other bytes: %w", meta.ID, ErrInvalid)
		}
		if old.Job != job {
			return fmt.Errorf("certificate %q is stored for job %q: %w", meta.ID, old.Job.String(), ErrInvalid)
		}
		return nil
	}
	data, err := encode(&certRecord{
		V:    recordVersion,
		Meta: certInfo{ID: meta.ID, Key: meta.Key, TimeMS: meta.TimeMS, CILowMS: meta.CILowMS, CIHighMS: meta.CIHighMS, Speedup: meta.Speedup, IssuedAt: meta.IssuedAt},
		Job:  job.String(),
		Body: body,
	})
	if err != nil {
		return err
	}
	if err := registerJob(tx, job); err != nil {
		return err
	}
	if err := certs.Put(id, data); err != nil {
		return err
	}
	jb, err := index.CreateBucketIfNotExists([]byte(job.String()))
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", path(string(bucketRoot), string(bucketJobCerts), quoted(job.String())), err)
	}
	return jb.Put(id, []byte{})
}

// Cert returns the signed bytes and metadata (with Job and revocation filled); ErrNotFound.
func (s *Store) Cert(id string) ([]byte, CertMeta, error) {
	var (
		body []byte
		meta CertMeta
	)
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		body, meta, err = readCert(tx, []byte(id))
		return err
	})
	if err != nil {
		return nil, CertMeta{}, fmt.Errorf("get certificate %q: %w", id, err)
	}
	return body, meta, nil
}

// Certs lists metadata of every certificate, newest IssuedAt first; JobCerts those of one job, best (lowest TimeMS) first.
//
// Both include revoked certificates, with their revocation filled; equal
// times are in id order. A certificate whose record (or revocation) does
// not decode, or is missing from the index, is skipped and reported to
// Options.OnCorrupt.
func (s *Store) Certs() ([]CertMeta, error) {
	out := []CertMeta{}
	err := s.view(func(tx *bolt.Tx) error {
		certs, err := top(tx, bucketCerts)
		if err != nil {
			return err
		}
		revs, err := top(tx, bucketRevocations)
		if err != nil {
			return err
		}
		return certs.ForEach(func(id, v []byte) error {
			if v == nil {
				s.corrupt(bucketCerts, certWhere(id), fmt.Errorf("bucket %s: %w: a bucket, not a certificate", certWhere(id), ErrCorrupt))
				return nil
			}
			_, meta, err := certFromRecord(v, id)
			if err == nil {
				meta, err = withRevocation(revs, meta)
			}
			if err != nil {
				s.corrupt(bucketCerts, certWhere(id), err)
				return nil
			}
			out = append(out, meta)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list certificates: %w", err)
	}
	slices.SortStableFunc(out, func(a, b CertMeta) int { return b.IssuedAt.Compare(a.IssuedAt) })
	return out, nil
}

// JobCerts lists the metadata of job's certificates, lowest TimeMS first;
// see Certs.
func (s *Store) JobCerts(job JobKey) ([]CertMeta, error) {
	out := []CertMeta{}
	err := s.view(func(tx *bolt.Tx) error {
		jb, err := jobBucket(tx, bucketJobCerts, job)
		if err != nil || jb == nil {
			return err
		}
		return jb.ForEach(func(id, _ []byte) error {
			where := path(string(bucketRoot), string(bucketJobCerts), quoted(job.String()), quoted(string(id)))
			_, meta, err := readCert(tx, id)
			switch {
			case errors.Is(err, ErrNotFound):
				err = fmt.Errorf("index %s: %w: certificate missing from %s", where, ErrCorrupt, path(string(bucketRoot), string(bucketCerts)))
			case err == nil && meta.Job != job:
				err = fmt.Errorf("index %s: %w: certificate is of job %q", where, ErrCorrupt, meta.Job.String())
			}
			if errors.Is(err, ErrCorrupt) {
				s.corrupt(bucketCerts, where, err)
				return nil
			}
			if err != nil {
				return err
			}
			out = append(out, meta)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list certificates %q: %w", job.String(), err)
	}
	slices.SortStableFunc(out, func(a, b CertMeta) int { return cmp.Compare(a.TimeMS, b.TimeMS) })
	return out, nil
}

// Revoke marks a certificate revoked with a reason (non-empty, else ErrInvalid); revoking twice keeps the first
// revocation and returns nil. ErrNotFound for an unknown id.
//
// It returns the certificate's metadata with its revocation, as Cert reads
// it afterwards.
func (s *Store) Revoke(id, reason string, at time.Time) (CertMeta, error) {
	if reason == "" {
		return CertMeta{}, fmt.Errorf("revoke certificate %q: empty reason: %w", id, ErrInvalid)
	}
	var meta CertMeta
	err := s.update(func(tx *bolt.Tx) error {
		var err error
		if _, meta, err = readCert(tx, []byte(id)); err != nil || meta.Revoked {
			return err
		}
		revs, err := top(tx, bucketRevocations)
		if err != nil {
			return err
		}
		data, err := encode(&revocationRecord{V: recordVersion, Reason: reason, RevokedAt: at})
		if err != nil {
			return err
		}
		if err := revs.Put([]byte(id), data); err != nil {
			return err
		}
		if meta, err = withRevocation(revs, meta); err != nil { // as stored: the time as JSON gives it back
			return err
		}
		return dropFromFront(tx, meta.Job, id)
	})
	if err != nil {
		return CertMeta{}, fmt.Errorf("revoke certificate %q: %w", id, err)
	}
	return meta, nil
}

// dropFromFront takes the point certified by id off the front of job's
// served record, in the transaction that revokes it, so no lookup answers
// it after. The served config itself is the caller's to replace.
func dropFromFront(tx *bolt.Tx, job JobKey, id string) error {
	sv, ok, err := getServed(tx, job)
	if errors.Is(err, ErrCorrupt) {
		return nil // it serves nothing (Served), and the next promotion replaces it
	}
	if err != nil || !ok {
		return err
	}
	n := len(sv.Front)
	sv.Front = slices.DeleteFunc(sv.Front, func(f FrontPoint) bool { return f.Certificate == id })
	if len(sv.Front) == n {
		return nil
	}
	b, err := top(tx, bucketServed)
	if err != nil {
		return err
	}
	data, err := encode(&servedRecord{V: recordVersion, Served: sv})
	if err != nil {
		return err
	}
	return b.Put([]byte(job.String()), data)
}

// readCert returns the body and metadata of certificate id in tx, with its
// revocation; ErrNotFound when there is none.
func readCert(tx *bolt.Tx, id []byte) ([]byte, CertMeta, error) {
	certs, err := top(tx, bucketCerts)
	if err != nil {
		return nil, CertMeta{}, err
	}
	revs, err := top(tx, bucketRevocations)
	if err != nil {
		return nil, CertMeta{}, err
	}
	v := certs.Get(id)
	if v == nil {
		return nil, CertMeta{}, ErrNotFound
	}
	rec, meta, err := certFromRecord(v, id)
	if err != nil {
		return nil, CertMeta{}, err
	}
	meta, err = withRevocation(revs, meta)
	return rec.Body, meta, err
}

// certFromRecord decodes the certs value v at key id and checks it names
// id, a job and a body. The metadata it returns has no revocation.
func certFromRecord(v, id []byte) (certRecord, CertMeta, error) {
	where := certWhere(id)
	rec, err := decodeCert(v, where)
	if err != nil {
		return certRecord{}, CertMeta{}, err
	}
	if rec.Meta.ID != string(id) {
		return certRecord{}, CertMeta{}, fmt.Errorf("decode %s: %w: record names certificate %q", where, ErrCorrupt, rec.Meta.ID)
	}
	job, err := ParseJobKey(rec.Job)
	if err != nil {
		return certRecord{}, CertMeta{}, fmt.Errorf("decode %s: %w: %v", where, ErrCorrupt, err)
	}
	if len(rec.Body) == 0 {
		return certRecord{}, CertMeta{}, fmt.Errorf("decode %s: %w: no signed bytes", where, ErrCorrupt)
	}
	m := rec.Meta
	meta := CertMeta{ID: m.ID, Job: job, Key: m.Key, TimeMS: m.TimeMS, CILowMS: m.CILowMS, CIHighMS: m.CIHighMS, Speedup: m.Speedup, IssuedAt: m.IssuedAt}
	return rec, meta, nil
}

// withRevocation fills meta's revocation from the revocations bucket revs.
func withRevocation(revs *bolt.Bucket, meta CertMeta) (CertMeta, error) {
	v := revs.Get([]byte(meta.ID))
	if v == nil {
		return meta, nil
	}
	rev, err := decodeRevocation(v, path(string(bucketRoot), string(bucketRevocations), quoted(meta.ID)))
	if err != nil {
		return CertMeta{}, err
	}
	meta.Revoked, meta.RevokedAt, meta.Reason = true, rev.RevokedAt, rev.Reason
	return meta, nil
}

func certWhere(id []byte) string {
	return path(string(bucketRoot), string(bucketCerts), quoted(string(id)))
}
