package certs_test

import (
	"bytes"
	"testing"

	"github.com/quasim/quasim/certs"
)

// fuzzSeeds are valid encodings and near misses.
func fuzzSeeds(f *testing.F) {
	key, _ := testKey(1)
	notMade := smallCert()
	notMade.Checks = append(notMade.Checks, certs.Check{Name: "error_bound", NotChecked: "no outputs"})
	for _, c := range []*certs.Certificate{sampleCert(), smallCert(), notMade, {V: 1}} {
		data := signed(f, c, key)
		f.Add(data)
		f.Add(bytes.Replace(data, []byte(`"v":1`), []byte(`"v":2`), 1))
		f.Add(append(bytes.Clone(data), '\n'))
		f.Add(data[:len(data)/2])
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"v":1,"config":{"x":1e400}}`))
	f.Add([]byte(`{"v":1,"config":{"x":123456789012345678901234567890,"y":-0,"z":1.50}}`))
	f.Add([]byte(`[[[[[[[[[[]]]]]]]]]]`))
	f.Add([]byte("{\"v\":1,\"key\":\"\xff\\u2028\\ud800\"}"))
}

// FuzzDecode checks that Decode never panics and that what it decodes
// encodes, and encodes to a fixed point.
func FuzzDecode(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := certs.Decode(data)
		if err != nil {
			return
		}
		enc, err := c.Encode()
		if err != nil {
			t.Fatalf("Encode(Decode(%q)) = %v", data, err)
		}
		if _, err := c.Body(); err != nil {
			t.Fatalf("Body(Decode(%q)) = %v", data, err)
		}
		var b bytes.Buffer
		if err := c.Report(&b); err != nil {
			t.Fatalf("Report: %v", err)
		}
		c2, err := certs.Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(Decode(%q))) = %v\nencoded %s", data, err, enc)
		}
		enc2, err := c2.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not a fixed point:\n%s\n%s", enc, enc2)
		}
	})
}

// FuzzVerifyBytes checks that VerifyBytes never panics, fails only with
// its sentinels, and accepts nothing whose canonical JSON (RFC 8785) is
// not what it decodes to.
func FuzzVerifyBytes(f *testing.F) {
	fuzzSeeds(f)
	_, pub := testKey(1)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := certs.VerifyBytes(data, pub)
		if err != nil {
			if !isSentinel(err) {
				t.Fatalf("VerifyBytes(%q) = %v, not one of the sentinels", data, err)
			}
			if c != nil {
				t.Fatalf("VerifyBytes returned a certificate with error %v", err)
			}
			return
		}
		enc, err := c.Encode()
		if err != nil {
			t.Fatalf("Encode(verified) = %v", err)
		}
		canon, err := certs.CanonicalJSON(data)
		if err != nil || !bytes.Equal(enc, canon) {
			t.Fatalf("verified bytes, in canonical JSON, are not what they decode to (%v):\n got %s\nwant %s", err, enc, data)
		}
		if err := certs.Verify(c, pub); err != nil {
			t.Fatalf("Verify(verified) = %v", err)
		}
	})
}
