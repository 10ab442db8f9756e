package certs

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Version is the certificate format version, the value of Certificate.V.
const Version = 1

// Job is the unit that was tuned: a kernel spec at one problem on one
// device class.
type Job struct {
	Kernel   string            `json:"kernel"`
	SpecHash string            `json:"spec_hash"`
	Problem  string            `json:"problem"`
	Device   string            `json:"device"`            // device class
	Details  map[string]string `json:"details,omitempty"` // what is behind the class: cpu model, driver, toolkit, go version...
}

// Check is one verification with its inputs and results. Results values are
// JSON numbers, strings, bools or lists of them. A check the evaluator could
// not make is listed with NotChecked saying why and Passed false: it is
// neither passed nor failed, and never counted as passed.
type Check struct {
	Name       string         `json:"name"` // parity, determinism, error_bound, constraints, latency
	Passed     bool           `json:"passed"`
	NotChecked string         `json:"not_checked,omitempty"` // why the check was not made; "" when it was
	Inputs     map[string]any `json:"inputs,omitempty"`
	Results    map[string]any `json:"results,omitempty"`
	Note       string         `json:"note,omitempty"`
}

// NotMade returns why ch was not made, or "" when it was. Besides
// NotChecked, it reads the error_bound check of certificates issued before
// NotChecked existed, which recorded a bound that was never computed
// (formula "none: ...") as passed.
func (ch Check) NotMade() string {
	if ch.NotChecked != "" {
		return ch.NotChecked
	}
	if f, ok := ch.Inputs["formula"].(string); ok && ch.Name == "error_bound" && strings.HasPrefix(f, "none: ") {
		return strings.TrimPrefix(f, "none: ") + " (recorded as passed by an older quasimd)"
	}
	return ""
}

// Latency is the measured latency distribution of the certified config.
type Latency struct {
	Samples  int       `json:"samples"`
	MedianMS float64   `json:"median_ms"`
	P95MS    float64   `json:"p95_ms"`
	CILowMS  float64   `json:"ci95_low_ms"` // bootstrap 95% CI of the median
	CIHighMS float64   `json:"ci95_high_ms"`
	TimesMS  []float64 `json:"times_ms"`
}

// Certificate is a signed statement that config Config (canonical key Key)
// of job Job passed the checks Checks, with its latency distribution.
type Certificate struct {
	V        int            `json:"v"` // Version
	Job      Job            `json:"job"`
	Key      string         `json:"key"`       // canonical config key
	Config   map[string]any `json:"config"`    // param -> value
	Checks   []Check        `json:"checks"`    //
	Latency  Latency        `json:"latency"`   //
	IssuedAt time.Time      `json:"issued_at"` // UTC, RFC 3339 with nanoseconds
	Issuer   string         `json:"issuer"`    // key id of the signing key

	ID        string `json:"id"`        // hex sha256 of Body(); not part of the body
	Signature string `json:"signature"` // base64 (std) ed25519 signature of Body(); not part of the body
}

// Passed reports whether the certificate records at least one check that
// was made and every check made passed; checks not made (NotMade) count
// neither way. A certificate without checks certifies nothing and has not
// passed.
func (c *Certificate) Passed() bool {
	if c == nil {
		return false
	}
	made := 0
	for _, ch := range c.Checks {
		if ch.NotMade() != "" {
			continue
		}
		if !ch.Passed {
			return false
		}
		made++
	}
	return made > 0
}

// Sign signs c with key: it sets Issuer to the KeyID of key's public key,
// then ID and Signature from the body. A zero V is set to Version. On error
// c is left unchanged.
func Sign(c *Certificate, key ed25519.PrivateKey) error {
	if c == nil {
		return fmt.Errorf("sign certificate: %w: nil certificate", ErrMalformed)
	}
	if len(key) != ed25519.PrivateKeySize {
		return fmt.Errorf("sign certificate: %w: private key is %d bytes, want %d", ErrMalformed, len(key), ed25519.PrivateKeySize)
	}
	s := *c
	if s.V == 0 {
		s.V = Version
	}
	s.Issuer = KeyID(key.Public().(ed25519.PublicKey))
	body, err := s.Body()
	if err != nil {
		return fmt.Errorf("sign certificate: %w", err)
	}
	sum := sha256.Sum256(body)
	c.V, c.Issuer = s.V, s.Issuer
	c.ID = hex.EncodeToString(sum[:])
	c.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, body))
	return nil
}

// Verify checks c against the issuer's public key pub: it recomputes the
// body, checks that ID is its hash (ErrBadID), that Issuer is KeyID(pub)
// (ErrWrongIssuer) and that Signature is pub's signature of the body
// (ErrBadSignature). A certificate that cannot be encoded, a version other
// than Version or a malformed key is ErrMalformed.
func Verify(c *Certificate, pub ed25519.PublicKey) error {
	if c == nil {
		return fmt.Errorf("verify certificate: %w: nil certificate", ErrMalformed)
	}
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("verify certificate: %w: public key is %d bytes, want %d", ErrMalformed, len(pub), ed25519.PublicKeySize)
	}
	if c.V != Version {
		return fmt.Errorf("verify certificate: %w: version %d, want %d", ErrMalformed, c.V, Version)
	}
	body, err := c.Body()
	if err != nil {
		return fmt.Errorf("verify certificate: %w", err)
	}
	sum := sha256.Sum256(body)
	id := hex.EncodeToString(sum[:])
	if c.ID != id {
		// Certificates signed before JCS hash and sign their legacy body;
		// it differs from the JCS one only for rare values (canonical.go).
		if lb, err := c.legacyBody(); err == nil && !bytes.Equal(lb, body) {
			if ls := sha256.Sum256(lb); hex.EncodeToString(ls[:]) == c.ID {
				body, id = lb, c.ID
			}
		}
	}
	if c.ID != id {
		if c.ID == "" {
			return fmt.Errorf("verify certificate: %w: id is empty (the certificate was never signed)", ErrBadID)
		}
		return fmt.Errorf("verify certificate %s: %w: the content hashes to %s", clip(c.ID), ErrBadID, id)
	}
	if want := KeyID(pub); c.Issuer != want {
		return fmt.Errorf("verify certificate %s: %w: issuer is %s, the key is %s", c.ID, ErrWrongIssuer, clip(c.Issuer), want)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(c.Signature)
	switch {
	case c.Signature == "":
		return fmt.Errorf("verify certificate %s: %w: signature is empty", c.ID, ErrBadSignature)
	case err != nil || len(sig) != ed25519.SignatureSize || base64.StdEncoding.EncodeToString(sig) != c.Signature:
		return fmt.Errorf("verify certificate %s: %w: signature is not the padded standard base64 of %d bytes", c.ID, ErrBadSignature, ed25519.SignatureSize)
	case !ed25519.Verify(pub, body, sig):
		return fmt.Errorf("verify certificate %s: %w: signature does not verify with key %s", c.ID, ErrBadSignature, KeyID(pub))
	}
	return nil
}

// VerifyBytes decodes a certificate from data, verifies it with pub as
// Verify does, and checks that what data holds is what the certificate
// encodes to, compared in canonical JSON (RFC 8785): indentation, key
// order, escapes and number formatting (jq's 5.3e-06 for 0.0000053, Python's
// \u00b5 for µ) may differ from Encode's bytes, while content that decodes
// to the same certificate only by normalising it (an offset time, an empty
// details object) is ErrNotCanonical. A decoding error is ErrMalformed.
func VerifyBytes(data []byte, pub ed25519.PublicKey) (*Certificate, error) {
	tree, err := parseJSON(data)
	if err != nil {
		return nil, fmt.Errorf("decode certificate: %w: %w", ErrMalformed, err)
	}
	// Canonical before decoding: decoding converts the tree's numbers.
	given, err := writeCanonical(tree)
	if err != nil {
		return nil, fmt.Errorf("decode certificate: %w", err)
	}
	c, err := decodeTree(tree)
	if err != nil {
		return nil, err
	}
	if err := Verify(c, pub); err != nil {
		return nil, err
	}
	enc, err := c.Encode()
	if err != nil {
		return nil, fmt.Errorf("verify certificate %s: %w", c.ID, err)
	}
	if !bytes.Equal(enc, given) {
		return nil, fmt.Errorf("verify certificate %s: %w: %s", c.ID, ErrNotCanonical, firstDifference(given, enc))
	}
	return c, nil
}

// firstDifference describes where got, in canonical JSON, departs from
// the certificate's encoding want.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	if i == len(got) || i == len(want) {
		return fmt.Sprintf("canonical length %d, the certificate encodes to %d", len(got), len(want))
	}
	return fmt.Sprintf("after %q, %q where the certificate encodes to %q", tailOf(got[:i], 24), got[i], want[i])
}

// tailOf is the last n bytes of b, for locating a difference.
func tailOf(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// clip shortens s, taken from untrusted input, for an error message.
func clip(s string) string {
	const max = 80
	if len(s) > max {
		s = s[:max] + "..."
	}
	return fmt.Sprintf("%q", s)
}
