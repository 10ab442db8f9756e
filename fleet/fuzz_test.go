package fleet

import (
	"crypto/ed25519"
	"testing"

	"github.com/quasim/quasim/certs"
)

// FuzzApply feeds arbitrary records to a view: it never panics, and every
// offer it holds verifies with the trusted key at its own key.
func FuzzApply(f *testing.F) {
	a := testKey(1)
	pub := a.Public().(ed25519.PublicKey)
	k, v := offerOf(f, testCert(f, a, "64", dev, 1.25), "00ff")
	f.Add(k, v)
	f.Add(RevokeKey("ab"), []byte(`{"v":1,"cert":"ab","reason":"x","at":"2025-01-01T00:00:00Z","issuer":"ed25519:00","signature":""}`))
	f.Add(FailKey("ab", "cd"), []byte(`{"v":1,"cert":"ab","node":"cd","reason":"x","at":"2025-01-01T00:00:00Z","reporter":"r","signature":""}`))
	f.Add("trials", []byte(`{"v":1,"job":{"kernel":"k","spec_hash":"","problem":"","device":"d"},"key":"1","status":"ok","node":"ab"}`))
	f.Fuzz(func(t *testing.T, key string, data []byte) {
		view := NewView(NewTrust(pub))
		view.Apply(key, data, false)
		for job, offers := range view.offers {
			for k, o := range offers {
				c, err := certs.VerifyBytes(o.Raw, pub)
				if err != nil {
					t.Fatalf("view holds an offer that does not verify: %v", err)
				}
				if k != CertKey(jobOf(c.Job), c.Issuer) || job != jobOf(c.Job) {
					t.Fatalf("offer of %v held at %q", c.Job, k)
				}
			}
		}
		DecodeSummary(data)
	})
}
