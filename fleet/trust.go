package fleet

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/quasim/quasim/certs"
)

// DefaultTrustDir holds the public keys a node trusts, one per *.pub file
// in the form certs.FormatPublicKey writes.
const DefaultTrustDir = "/etc/quasim/fleet-trust.d"

// Trust is a set of trusted public keys by key id. It is not safe for
// concurrent change; the client copies it.
type Trust struct {
	keys map[string]ed25519.PublicKey
}

// NewTrust is the set of pubs.
func NewTrust(pubs ...ed25519.PublicKey) *Trust {
	t := &Trust{keys: map[string]ed25519.PublicKey{}}
	for _, p := range pubs {
		t.keys[certs.KeyID(p)] = p
	}
	return t
}

// Key is the trusted key with id, if any.
func (t *Trust) Key(id string) (ed25519.PublicKey, bool) {
	if t == nil {
		return nil, false
	}
	k, ok := t.keys[id]
	return k, ok
}

// IDs are the trusted key ids, sorted.
func (t *Trust) IDs() []string {
	ids := make([]string, 0, len(t.keys))
	for id := range t.keys {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// LoadTrustDir reads the public keys of dir's *.pub files. A missing dir
// holds none; a file that is not a public key is an error naming it.
func LoadTrustDir(dir string) ([]ed25519.PublicKey, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.pub"))
	if err != nil {
		return nil, fmt.Errorf("trust dir %s: %w", dir, err)
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	sort.Strings(files)
	var out []ed25519.PublicKey
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("trust key %s: %w", f, err)
		}
		if len(data) > 4096 {
			return nil, fmt.Errorf("trust key %s: %w: %d bytes, a public key is one line", f, ErrMalformed, len(data))
		}
		pub, err := certs.ParsePublicKey(string(data))
		if err != nil {
			return nil, fmt.Errorf("trust key %s: %w", f, err)
		}
		out = append(out, pub)
	}
	return out, nil
}

// Verified is an offer whose certificate verified with a trusted key.
type Verified struct {
	Job         JobID
	Cert        *certs.Certificate
	Raw         []byte // the certificate as signed
	Node        string // the publishing node's salted id
	PublishedAt time.Time
}

// CheckOffer decodes the offer stored at KV key kvKey and verifies it: its
// certificate must verify (certs.VerifyBytes) with a key of t, have passed
// its checks, and be stored at the key of its own job and issuer.
// Untrusted keys are ErrUntrusted; a changed byte, signature or key is
// ErrTampered.
func CheckOffer(t *Trust, kvKey string, data []byte) (Verified, error) {
	var o Offer
	if err := decodeStrict("offer "+clip(kvKey), data, &o); err != nil {
		return Verified{}, err
	}
	if o.V != Version {
		return Verified{}, fmt.Errorf("offer %s: %w: version %d, want %d", clip(kvKey), ErrMalformed, o.V, Version)
	}
	if !hexRE.MatchString(o.Node) {
		return Verified{}, fmt.Errorf("offer %s: %w: node %q is not a node id", clip(kvKey), ErrMalformed, clip(o.Node))
	}
	c, err := certs.Decode(o.Cert)
	if err != nil {
		return Verified{}, fmt.Errorf("offer %s: %w: %w", clip(kvKey), ErrTampered, err)
	}
	pub, ok := t.Key(c.Issuer)
	if !ok {
		return Verified{}, fmt.Errorf("offer %s: certificate %s: %w %s", clip(kvKey), clip(c.ID), ErrUntrusted, clip(c.Issuer))
	}
	c, err = certs.VerifyBytes(o.Cert, pub)
	if err != nil {
		return Verified{}, fmt.Errorf("offer %s: %w: %w", clip(kvKey), ErrTampered, err)
	}
	job := jobOf(c.Job)
	if want := CertKey(job, c.Issuer); kvKey != want {
		return Verified{}, fmt.Errorf("offer %s: %w: certificate %s belongs at %s", clip(kvKey), ErrTampered, c.ID, want)
	}
	if !c.Passed() {
		return Verified{}, fmt.Errorf("offer %s: certificate %s: %w", clip(kvKey), c.ID, ErrNotPassed)
	}
	return Verified{Job: job, Cert: c, Raw: []byte(o.Cert), Node: o.Node, PublishedAt: o.PublishedAt}, nil
}

// CheckRevocation decodes the revocation at kvKey and verifies its
// issuer's signature with a key of t.
func CheckRevocation(t *Trust, kvKey string, data []byte) (Revocation, error) {
	r, err := DecodeRevocation(data)
	if err != nil {
		return r, err
	}
	if kvKey != RevokeKey(r.Cert) {
		return r, fmt.Errorf("revocation %s: %w: it revokes %s", clip(kvKey), ErrTampered, r.Cert)
	}
	pub, ok := t.Key(r.Issuer)
	if !ok {
		return r, fmt.Errorf("revocation of %s: %w %s", r.Cert, ErrUntrusted, clip(r.Issuer))
	}
	if !verifySig(pub, r.body(), r.Signature) {
		return r, fmt.Errorf("revocation of %s: %w: signature does not verify", r.Cert, ErrTampered)
	}
	return r, nil
}

// CheckFailure decodes the failure report at kvKey and verifies its
// reporter's signature with a key of t.
func CheckFailure(t *Trust, kvKey string, data []byte) (Failure, error) {
	f, err := DecodeFailure(data)
	if err != nil {
		return f, err
	}
	if kvKey != FailKey(f.Cert, f.Node) {
		return f, fmt.Errorf("failure %s: %w: it reports %s on %s", clip(kvKey), ErrTampered, f.Cert, f.Node)
	}
	pub, ok := t.Key(f.Reporter)
	if !ok {
		return f, fmt.Errorf("failure of %s: %w %s", f.Cert, ErrUntrusted, clip(f.Reporter))
	}
	if !verifySig(pub, f.body(), f.Signature) {
		return f, fmt.Errorf("failure of %s: %w: signature does not verify", f.Cert, ErrTampered)
	}
	return f, nil
}
