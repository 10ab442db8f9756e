package fleet

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/quasim/quasim/certs"
)

// Version is the version of every fleet record, the value of their "v".
const Version = 1

// maxRecord bounds a record's size; a larger one is malformed.
const maxRecord = 1 << 20

// Key prefixes in the fleet's KV bucket.
const (
	prefixCert   = "cert."
	prefixRevoke = "revoke."
	prefixFail   = "fail."
	prefixAgg    = "agg."
	keySalt      = "meta.salt"
)

var (
	nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	hexRE  = regexp.MustCompile(`^[0-9a-f]{1,64}$`)
)

// CheckName checks a fleet name: 1 to 64 letters, digits, '-' or '_', so it
// can name a bucket and a stream.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("fleet name %q: %w: want 1 to 64 letters, digits, '-' or '_'", name, ErrMalformed)
	}
	return nil
}

// Bucket is the KV bucket of fleet name.
func Bucket(name string) string { return "quasim-fleet-" + name }

// Stream is the stream of trial summaries of fleet name, and Subject the
// subject of the summaries of device class dev in it.
func Stream(name string) string { return "QUASIM_FLEET_" + name + "_TRIALS" }

// Subject is the stream subject of trial summaries of device class dev.
func Subject(name, dev string) string { return "quasim.fleet." + name + ".trials." + part(dev) }

// part is the key component of a name that KV keys cannot hold as it is
// (device classes have '/' and spaces, problems ','): 32 hex digits of its
// SHA-256.
func part(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// JobID is what names a job across the fleet: the certificate's kernel,
// spec hash, problem and device class.
type JobID struct {
	Kernel   string `json:"kernel"`
	SpecHash string `json:"spec_hash"`
	Problem  string `json:"problem"`
	Device   string `json:"device"`
}

func jobOf(j certs.Job) JobID {
	return JobID{Kernel: j.Kernel, SpecHash: j.SpecHash, Problem: j.Problem, Device: j.Device}
}

// String is the job as the daemon writes job ids.
func (j JobID) String() string { return j.Kernel + "|" + j.SpecHash + "|" + j.Problem + "|" + j.Device }

// CertKey is the KV key of an offer of job j's config certified by the key
// with id issuer: "cert.DEV.SPEC.KERNEL.PROBLEM.ISSUER", device class
// first so a node can watch its own classes only.
func CertKey(j JobID, issuer string) string {
	return prefixCert + jobPrefix(j) + strings.TrimPrefix(issuer, "ed25519:")
}

// jobPrefix is the part of CertKey that names the job, with its trailing dot.
func jobPrefix(j JobID) string {
	return part(j.Device) + "." + part(j.SpecHash) + "." + part(j.Kernel) + "." + part(j.Problem) + "."
}

// RevokeKey is the KV key of the revocation of certificate id.
func RevokeKey(id string) string { return prefixRevoke + id }

// FailKey is the KV key of node's report that certificate id failed there.
func FailKey(id, node string) string { return prefixFail + id + "." + node }

// Offer is a certified config offered to the fleet: the certificate as
// signed, and the salted id of the node that published it.
type Offer struct {
	V           int             `json:"v"`
	Cert        json.RawMessage `json:"cert"`
	Node        string          `json:"node"`
	PublishedAt time.Time       `json:"published_at"`
}

// offerRecord is the stored Offer of certificate raw by node.
func offerRecord(raw []byte, node string, at time.Time) ([]byte, error) {
	return encode(Offer{V: Version, Cert: raw, Node: node, PublishedAt: at.UTC()})
}

// Revocation says a certificate is revoked, signed by its issuer.
type Revocation struct {
	V         int       `json:"v"`
	Cert      string    `json:"cert"` // certificate id
	Reason    string    `json:"reason"`
	At        time.Time `json:"at"`
	Issuer    string    `json:"issuer"` // key id
	Signature string    `json:"signature"`
}

// Failure says a certified config failed local verification on a node;
// signed by that node's key.
type Failure struct {
	V         int       `json:"v"`
	Cert      string    `json:"cert"`
	Node      string    `json:"node"`
	Reason    string    `json:"reason"`
	At        time.Time `json:"at"`
	Reporter  string    `json:"reporter"` // key id
	Signature string    `json:"signature"`
	// Stored is when the fleet's bucket stored the report, by its
	// server's clock (set on receipt, not signed; zero when unknown):
	// one clock for every reporter, whatever theirs say.
	Stored time.Time `json:"-"`
}

// Summary is one trial of a job, anonymised: no host, user, path or
// repetition, and the node as its salted id.
type Summary struct {
	V        int      `json:"v"`
	Job      JobID    `json:"job"`
	Key      string   `json:"key"`    // canonical config key
	Status   string   `json:"status"` // trial status (FAIR T4 classes)
	TimeMS   float64  `json:"time_ms,omitempty"`
	EnergyMJ *float64 `json:"energy_mj,omitempty"`
	Node     string   `json:"node"`
}

func (r *Revocation) body() []byte {
	return signedBody("revocation", r.Cert, r.Reason, r.At.UTC().Format(time.RFC3339Nano), r.Issuer)
}

func (f *Failure) body() []byte {
	return signedBody("failure", f.Cert, f.Node, f.Reason, f.At.UTC().Format(time.RFC3339Nano), f.Reporter)
}

// signedBody joins a record's fields, each length-prefixed so that no two
// records share a body.
func signedBody(kind string, fields ...string) []byte {
	var b bytes.Buffer
	b.WriteString("quasim-fleet/v1 " + kind + "\n")
	for _, f := range fields {
		fmt.Fprintf(&b, "%d:%s\n", len(f), f)
	}
	return b.Bytes()
}

func sign(key ed25519.PrivateKey, body []byte) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, body))
}

func verifySig(pub ed25519.PublicKey, body []byte, sig string) bool {
	b, err := base64.StdEncoding.Strict().DecodeString(sig)
	return err == nil && len(b) == ed25519.SignatureSize && ed25519.Verify(pub, body, b)
}

// NewRevocation signs the revocation of certificate id by key, its issuer.
func NewRevocation(key ed25519.PrivateKey, id, reason string, at time.Time) Revocation {
	r := Revocation{V: Version, Cert: id, Reason: reason, At: at.UTC(), Issuer: certs.KeyID(key.Public().(ed25519.PublicKey))}
	r.Signature = sign(key, r.body())
	return r
}

// NewFailure signs node's report, by key, that certificate id failed there.
func NewFailure(key ed25519.PrivateKey, id, node, reason string, at time.Time) Failure {
	f := Failure{V: Version, Cert: id, Node: node, Reason: reason, At: at.UTC(), Reporter: certs.KeyID(key.Public().(ed25519.PublicKey))}
	f.Signature = sign(key, f.body())
	return f
}

// encode is a record's JSON. HTML escaping is off: encoding/json would
// otherwise rewrite '<', '>' and '&' in an embedded certificate, whose
// bytes must stay as signed (certs.VerifyBytes).
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// decodeStrict decodes one JSON value of at most maxRecord bytes into v,
// refusing unknown fields and trailing data.
func decodeStrict(what string, data []byte, v any) error {
	if len(data) > maxRecord {
		return fmt.Errorf("%s: %w: %d bytes, the most is %d", what, ErrMalformed, len(data), maxRecord)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w: %v", what, ErrMalformed, err)
	}
	if dec.More() {
		return fmt.Errorf("%s: %w: data after the record", what, ErrMalformed)
	}
	return nil
}

// DecodeRevocation decodes and checks the form of a revocation record.
func DecodeRevocation(data []byte) (Revocation, error) {
	var r Revocation
	if err := decodeStrict("revocation", data, &r); err != nil {
		return r, err
	}
	switch {
	case r.V != Version:
		return r, fmt.Errorf("revocation: %w: version %d, want %d", ErrMalformed, r.V, Version)
	case !hexRE.MatchString(r.Cert):
		return r, fmt.Errorf("revocation: %w: cert %q is not a certificate id", ErrMalformed, clip(r.Cert))
	}
	return r, nil
}

// DecodeFailure decodes and checks the form of a failure record.
func DecodeFailure(data []byte) (Failure, error) {
	var f Failure
	if err := decodeStrict("failure", data, &f); err != nil {
		return f, err
	}
	switch {
	case f.V != Version:
		return f, fmt.Errorf("failure: %w: version %d, want %d", ErrMalformed, f.V, Version)
	case !hexRE.MatchString(f.Cert):
		return f, fmt.Errorf("failure: %w: cert %q is not a certificate id", ErrMalformed, clip(f.Cert))
	case !hexRE.MatchString(f.Node):
		return f, fmt.Errorf("failure: %w: node %q is not a node id", ErrMalformed, clip(f.Node))
	}
	return f, nil
}

// DecodeSummary decodes and checks the form of a trial summary.
func DecodeSummary(data []byte) (Summary, error) {
	var s Summary
	if err := decodeStrict("trial summary", data, &s); err != nil {
		return s, err
	}
	switch {
	case s.V != Version:
		return s, fmt.Errorf("trial summary: %w: version %d, want %d", ErrMalformed, s.V, Version)
	case s.Job.Kernel == "" || s.Job.Device == "" || s.Key == "" || s.Status == "":
		return s, fmt.Errorf("trial summary: %w: kernel, device, key and status are required", ErrMalformed)
	case !hexRE.MatchString(s.Node):
		return s, fmt.Errorf("trial summary: %w: node %q is not a node id", ErrMalformed, clip(s.Node))
	}
	return s, nil
}

// clip shortens s, taken from the network, for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
