package fleet

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"testing"
	"time"

	"github.com/quasim/quasim/certs"
)

// testKey is a fixed key; its signatures are deterministic.
func testKey(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
}

// testCert is a passed certificate of sgemm at problem on dev, signed by key.
func testCert(t testing.TB, key ed25519.PrivateKey, problem, dev string, medianMS float64) []byte {
	t.Helper()
	c := &certs.Certificate{
		Job:    certs.Job{Kernel: "sgemm", SpecHash: "ab12cd34", Problem: problem, Device: dev},
		Key:    "8,2",
		Config: map[string]any{"tile": 8, "unroll": 2},
		Checks: []certs.Check{{
			Name: "parity", Passed: true,
			Results: map[string]any{"max_abs_err": 1e-06, "tolerance": 1e-05, "tolerance_kind": "abs"},
		}},
		Latency:  certs.Latency{Samples: 3, MedianMS: medianMS, P95MS: 1.5, CILowMS: 1.2, CIHighMS: 1.3, TimesMS: []float64{1.2, 1.25, 1.5}},
		IssuedAt: time.Date(2025, 1, 2, 3, 4, 5, 500000000, time.UTC),
	}
	if err := certs.Sign(c, key); err != nil {
		t.Fatal(err)
	}
	raw, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// offerOf is the KV key and value PublishCert stores for raw.
func offerOf(t testing.TB, raw []byte, node string) (string, []byte) {
	t.Helper()
	c, err := certs.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(Offer{V: Version, Cert: raw, Node: node, PublishedAt: time.Unix(0, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	return CertKey(jobOf(c.Job), c.Issuer), data
}

func jobIDOf(t testing.TB, raw []byte) JobID {
	t.Helper()
	c, err := certs.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return jobOf(c.Job)
}
