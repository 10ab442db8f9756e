package fleet

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/certs"
)

const dev = "cpu/Test CPU/avx2/2c"

func TestViewServesTrustedOnly(t *testing.T) {
	a, b := testKey(1), testKey(2)
	view := NewView(NewTrust(a.Public().(ed25519.PublicKey)))
	rawA := testCert(t, a, "64", dev, 1.25)
	rawB := testCert(t, b, "64", dev, 0.5) // faster, but its issuer is not trusted
	for _, raw := range [][]byte{rawA, rawB} {
		k, v := offerOf(t, raw, "00ff")
		view.Apply(k, v, false)
	}
	got, ok := view.Best(jobIDOf(t, rawA))
	if !ok || !bytes.Equal(got.Raw, rawA) {
		t.Fatalf("Best = %v, %v; want the trusted offer", got.Cert, ok)
	}
	if view.Rejected.Untrusted != 1 {
		t.Errorf("Rejected = %+v, want 1 untrusted", view.Rejected)
	}

	// A revocation by its issuer takes it out; one signed by another key,
	// even a trusted one, does not.
	forged := NewRevocation(testKey(3), got.Cert.ID, "forged", time.Now())
	forged.Issuer = got.Cert.Issuer
	data, _ := json.Marshal(forged)
	if _, _, err := view.Apply(RevokeKey(got.Cert.ID), data, false); !errors.Is(err, ErrTampered) {
		t.Errorf("forged revocation: err = %v, want ErrTampered", err)
	}
	if _, ok := view.Best(got.Job); !ok {
		t.Fatal("a forged revocation took the offer out")
	}
	r := NewRevocation(a, got.Cert.ID, "wrong on sm90", time.Now())
	data, _ = json.Marshal(r)
	job, changed, err := view.Apply(RevokeKey(got.Cert.ID), data, false)
	if err != nil || !changed || job != got.Job {
		t.Fatalf("Apply(revocation) = %v, %v, %v", job, changed, err)
	}
	if o, ok := view.Best(got.Job); ok {
		t.Fatalf("Best after revocation = %s, want none", o.Cert.ID)
	}
}

// Every changed byte of an offer's certificate, and every field rewritten
// with its signature left as it was, is left out of the view: nothing of
// it is served, and the valid offer at the same key stays.
func TestViewIgnoresTampered(t *testing.T) {
	a := testKey(1)
	view := NewView(NewTrust(a.Public().(ed25519.PublicKey)))
	raw := testCert(t, a, "64", dev, 1.25)
	key, valid := offerOf(t, raw, "00ff")
	if _, _, err := view.Apply(key, valid, false); err != nil {
		t.Fatalf("valid offer: %v", err)
	}
	job := jobIDOf(t, raw)
	variants := tamperedOffers(t, raw)
	if len(variants) < 100 {
		t.Fatalf("%d tampered variants, want at least 100", len(variants))
	}
	for i, v := range variants {
		_, changed, err := view.Apply(v.key, v.data, false)
		if err == nil || changed {
			t.Fatalf("variant %d (%s): Apply = changed %v, err %v; want it left out", i, v.what, changed, err)
		}
		if got, ok := view.Best(job); !ok || !bytes.Equal(got.Raw, raw) {
			t.Fatalf("variant %d (%s) changed what is served", i, v.what)
		}
	}
	r := view.Rejected
	if n := r.Tampered + r.Malformed + r.Untrusted + r.NotPassed; n != len(variants) {
		t.Errorf("Rejected = %+v (%d), want %d", r, n, len(variants))
	}
	if view.Offers() != 1 {
		t.Errorf("Offers = %d, want 1", view.Offers())
	}
}

type variant struct {
	what      string
	key       string
	data      []byte
	canonical bool
}

// tamperedOffers are offers of raw, each changed in one way: a byte of the
// certificate replaced (all positions), a field rewritten without
// re-signing, the offer moved to another job's key, another issuer named.
func tamperedOffers(t testing.TB, raw []byte) []variant {
	t.Helper()
	key, _ := offerOf(t, raw, "00ff")
	var out []variant
	for i := range raw {
		for _, x := range []byte{0x01, 0x20} {
			b := bytes.Clone(raw)
			b[i] ^= x
			if isSpace(b[i]) { // whitespace is insignificant by design
				continue
			}
			data, _ := json.Marshal(Offer{V: Version, Cert: b, Node: "00ff"})
			if !json.Valid(data) { // json.Marshal refuses invalid RawMessage: store it as sent
				data = []byte(fmt.Sprintf(`{"v":1,"cert":%s,"node":"00ff","published_at":"1970-01-01T00:00:00Z"}`, b))
			}
			out = append(out, variant{what: fmt.Sprintf("byte %d ^ %#x", i, x), key: key, data: data})
		}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edits := map[string]func(m map[string]any){
		"problem":   func(m map[string]any) { m["job"].(map[string]any)["problem"] = "128" },
		"device":    func(m map[string]any) { m["job"].(map[string]any)["device"] = "nvidia/H100/sm90/driver-550" },
		"key":       func(m map[string]any) { m["key"] = "16,2" },
		"latency":   func(m map[string]any) { m["latency"].(map[string]any)["median_ms"] = 0.001 },
		"issuer":    func(m map[string]any) { m["issuer"] = "ed25519:0000000000000000" },
		"passed":    func(m map[string]any) { m["checks"].([]any)[0].(map[string]any)["passed"] = false },
		"signature": func(m map[string]any) { m["signature"] = strings.Repeat("A", 86) + "==" },
	}
	for what, edit := range edits {
		var c map[string]any
		json.Unmarshal(raw, &c)
		edit(c)
		b, _ := json.Marshal(c)
		data, _ := json.Marshal(Offer{V: Version, Cert: b, Node: "00ff"})
		out = append(out, variant{what: "field " + what, key: key, data: data})
		if what == "problem" || what == "device" {
			// Stored at the key of the job it now names.
			j := jobIDOf(t, raw)
			if what == "problem" {
				j.Problem = "128"
			} else {
				j.Device = "nvidia/H100/sm90/driver-550"
			}
			out = append(out, variant{what: "field " + what + " at its key", key: CertKey(j, c["issuer"].(string)), data: data})
		}
	}
	// The valid offer stored at another job's key.
	_, valid := offerOf(t, raw, "00ff")
	j := jobIDOf(t, raw)
	j.Problem = "4096"
	out = append(out, variant{what: "moved to another job", key: CertKey(j, "ed25519:0000000000000000"), data: valid})
	return out
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func TestNodeID(t *testing.T) {
	k := testKey(1)
	id := nodeID([]byte("salt-1"), k)
	if len(id) != 32 || !hexRE.MatchString(id) {
		t.Fatalf("nodeID = %q, want 32 hex digits", id)
	}
	if nodeID([]byte("salt-1"), k) != id {
		t.Error("nodeID is not stable")
	}
	if nodeID([]byte("salt-2"), k) == id {
		t.Error("the same node has the same id in two fleets")
	}
	if nodeID([]byte("salt-1"), testKey(2)) == id {
		t.Error("two nodes share an id")
	}
}

// A certificate whose strings hold '<', '>' or '&' (constraints do) is
// stored byte for byte as signed, so it verifies where it arrives.
func TestOfferKeepsCertificateBytes(t *testing.T) {
	a := testKey(1)
	c := &certs.Certificate{
		Job:    certs.Job{Kernel: "reduce", SpecHash: "ab12", Problem: "64", Device: dev},
		Key:    "8,2",
		Config: map[string]any{"block": 8, "unroll": 2},
		Checks: []certs.Check{{Name: "constraints", Passed: true, Inputs: map[string]any{"constraints": []string{"block <= n && unroll > 0"}}}},
	}
	if err := certs.Sign(c, a); err != nil {
		t.Fatal(err)
	}
	raw, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	data, err := offerRecord(raw, "00ff", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckOffer(NewTrust(a.Public().(ed25519.PublicKey)), CertKey(jobOf(c.Job), c.Issuer), data); err != nil {
		t.Fatalf("CheckOffer of a published offer: %v", err)
	}
}
