package certs_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/certs"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// testKey returns a fixed key; Ed25519 signatures are deterministic, so a
// certificate signed with it always has the same bytes.
func testKey(seed byte) (ed25519.PrivateKey, ed25519.PublicKey) {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	return key, key.Public().(ed25519.PublicKey)
}

// sampleCert returns a certificate as the tuner builds one.
func sampleCert() *certs.Certificate {
	return &certs.Certificate{
		V: 1,
		Job: certs.Job{
			Kernel:   "sgemm",
			SpecHash: "9f2c0d17b4e5a83f",
			Problem:  "1024,1024,1024",
			Device:   "cpu/AMD EPYC 7B13/avx2/2c",
			Details:  map[string]string{"cpu_model": "AMD EPYC 7B13", "go_version": "go1.26.0"},
		},
		Key:    "64,8,2,fp32",
		Config: map[string]any{"tile": int64(64), "block": 8, "unroll": 2, "precision": "fp32"},
		Checks: []certs.Check{
			{
				Name: "parity", Passed: true,
				Inputs: map[string]any{"cases": 4, "tolerance_kind": "abs", "reference": "float64 reference implementation"},
				Results: map[string]any{
					"max_abs_err": 8.125e-07, "max_rel_err": 2.5e-07, "max_ulp": 3,
					"tolerance": 1e-05, "tolerance_kind": "abs", "worst": "case 2, element (17, 3)",
				},
			},
			{
				Name: "determinism", Passed: true,
				Inputs:  map[string]any{"runs": 3, "policy": "bitwise"},
				Results: map[string]any{"bitwise_identical": true, "max_spread": 0.0},
			},
			{
				Name: "error_bound", Passed: true,
				Inputs:  map[string]any{"formula": "gamma_k * |A||B|, k = 1024"},
				Results: map[string]any{"bound": 6.1e-05, "measured_err": 8.125e-07, "max_ratio": 0.0133},
			},
			{Name: "constraints", Passed: true, Inputs: map[string]any{"constraints": []string{"tile % block == 0", "tile <= 128 && unroll < 8"}}},
			{
				Name: "latency", Passed: true,
				Inputs:  map[string]any{"samples": 5},
				Results: map[string]any{"median_ms": 1.25, "p95_ms": 1.5},
			},
		},
		Latency: certs.Latency{
			Samples: 5, MedianMS: 1.25, P95MS: 1.5, CILowMS: 1.2, CIHighMS: 1.3,
			TimesMS: []float64{1.2, 1.25, 1.3, 1.5, 1.22},
		},
		IssuedAt: time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC),
	}
}

// smallCert is a certificate small enough to flip every byte of.
func smallCert() *certs.Certificate {
	return &certs.Certificate{
		V:      1,
		Job:    certs.Job{Kernel: "sgemm", SpecHash: "ab12", Problem: "64", Device: "cpu/x/avx2/2c"},
		Key:    "8,2",
		Config: map[string]any{"tile": 8, "unroll": 2},
		Checks: []certs.Check{{
			Name: "parity", Passed: true,
			Results: map[string]any{"max_abs_err": 1e-06, "tolerance": 1e-05, "tolerance_kind": "abs"},
		}},
		Latency:  certs.Latency{Samples: 3, MedianMS: 1.25, P95MS: 1.5, CILowMS: 1.2, CIHighMS: 1.3, TimesMS: []float64{1.2, 1.25, 1.5}},
		IssuedAt: time.Date(2025, 1, 2, 3, 4, 5, 500000000, time.UTC),
	}
}

func signed(t testing.TB, c *certs.Certificate, key ed25519.PrivateKey) []byte {
	t.Helper()
	if err := certs.Sign(c, key); err != nil {
		t.Fatalf("Sign: %v", err)
	}
	data, err := c.Encode()
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return data
}

func TestSignVerifyRoundTrip(t *testing.T) {
	t.Parallel()
	key, pub := testKey(1)
	tests := []struct {
		name string
		cert func() *certs.Certificate
	}{
		{"full", sampleCert},
		{"small", smallCert},
		{"empty", func() *certs.Certificate { return &certs.Certificate{} }},
		{"local time", func() *certs.Certificate {
			c := smallCert()
			c.IssuedAt = time.Date(2025, 6, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
			return c
		}},
		{"odd strings", func() *certs.Certificate {
			c := smallCert()
			c.Job.Kernel = "a<b>&c \"quoted\" \\ \t\n\u2028 é 日本 \x01"
			c.Job.Details = map[string]string{"": "empty key", "driver": "550.54.15"}
			c.Checks[0].Note = "<script>"
			return c
		}},
		{"wide numbers", func() *certs.Certificate {
			c := smallCert()
			c.Config = map[string]any{
				"big":     int64(math.MaxInt64),
				"ubig":    uint64(math.MaxUint64),
				"huge":    json.Number("123456789012345678901234567890"),
				"neg":     -3,
				"tiny":    1e-300,
				"f32":     float32(0.1),
				"e21":     1e21,
				"e20":     1e20,
				"lit":     json.Number("2.50"),
				"negzero": math.Copysign(0, -1),
			}
			return c
		}},
		{"nested values", func() *certs.Certificate {
			c := smallCert()
			c.Checks[0].Inputs = map[string]any{
				"list":   []any{1, "two", true, nil, []int{3, 4}},
				"nested": map[string]any{"z": 1, "a": map[string]any{"y": []float64{0.5}}},
				"empty":  map[string]any{},
			}
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := tt.cert()
			data := signed(t, c, key)
			if err := certs.Verify(c, pub); err != nil {
				t.Fatalf("Verify(signed) = %v, want nil", err)
			}
			if c.Issuer != certs.KeyID(pub) {
				t.Errorf("Issuer = %q, want %q", c.Issuer, certs.KeyID(pub))
			}
			got, err := certs.VerifyBytes(data, pub)
			if err != nil {
				t.Fatalf("VerifyBytes(Encode()) = %v, want nil\n%s", err, data)
			}
			if got.ID != c.ID {
				t.Errorf("VerifyBytes ID = %s, want %s", got.ID, c.ID)
			}
			again, err := got.Encode()
			if err != nil {
				t.Fatalf("Encode(decoded): %v", err)
			}
			if !bytes.Equal(again, data) {
				t.Errorf("Encode(Decode(data)) differs:\n got %s\nwant %s", again, data)
			}
			if !json.Valid(data) {
				t.Errorf("Encode() is not valid JSON: %s", data)
			}
			var std map[string]any
			if err := json.Unmarshal(data, &std); err != nil {
				t.Errorf("encoding/json cannot read Encode(): %v", err)
			}
		})
	}
}

func TestSignSetsVersionAndKeepsCertOnError(t *testing.T) {
	t.Parallel()
	key, pub := testKey(1)
	c := smallCert()
	c.V = 0
	if err := certs.Sign(c, key); err != nil {
		t.Fatal(err)
	}
	if c.V != certs.Version {
		t.Errorf("V after Sign = %d, want %d", c.V, certs.Version)
	}
	if err := certs.Verify(c, pub); err != nil {
		t.Errorf("Verify = %v", err)
	}

	bad := smallCert()
	bad.Checks[0].Results["max_abs_err"] = math.NaN()
	if err := certs.Sign(bad, key); !errors.Is(err, certs.ErrMalformed) {
		t.Errorf("Sign(NaN) = %v, want ErrMalformed", err)
	}
	if bad.ID != "" || bad.Signature != "" || bad.Issuer != "" {
		t.Errorf("failed Sign changed the certificate: id %q issuer %q", bad.ID, bad.Issuer)
	}
	if err := certs.Sign(smallCert(), key[:10]); !errors.Is(err, certs.ErrMalformed) {
		t.Errorf("Sign(short key) = %v, want ErrMalformed", err)
	}
	if err := certs.Sign(nil, key); !errors.Is(err, certs.ErrMalformed) {
		t.Errorf("Sign(nil) = %v, want ErrMalformed", err)
	}
}

func TestBodyIndependentOfMapOrder(t *testing.T) {
	t.Parallel()
	keys := []string{"tile", "block", "unroll", "a", "Z", "_", "é", "10", "9", "ab", "a b"}
	build := func(order []string) *certs.Certificate {
		c := smallCert()
		c.Config = map[string]any{}
		c.Job.Details = map[string]string{}
		in, res := map[string]any{}, map[string]any{}
		for _, k := range order {
			c.Config[k] = len(k)
			c.Job.Details[k] = k + "!"
			nested := map[string]any{}
			for _, k2 := range order {
				nested[k2] = k2 + k
			}
			in[k] = nested
			res[k] = []any{float64(len(k)), map[string]any{k: true}}
		}
		c.Checks[0].Inputs, c.Checks[0].Results = in, res
		return c
	}
	want, err := build(keys).Body()
	if err != nil {
		t.Fatal(err)
	}
	rev := make([]string, len(keys))
	for i, k := range keys {
		rev[len(keys)-1-i] = k
	}
	for i, order := range [][]string{rev, keys, {"9", "10", "a b", "ab", "é", "_", "Z", "a", "unroll", "block", "tile"}} {
		for range 10 {
			got, err := build(order).Body()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("order %d: Body differs:\n got %s\nwant %s", i, got, want)
			}
		}
	}
	if bytes.Contains(want, []byte(`"id"`)) || bytes.Contains(want, []byte(`"signature"`)) {
		t.Errorf("Body holds id or signature: %s", want)
	}
}

func TestCanonicalValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"integral float", 64.0, `64`},
		{"int", 64, `64`},
		// RFC 8785: numbers are IEEE doubles, so wider integers round.
		{"int64 max", int64(math.MaxInt64), `9223372036854776000`},
		{"uint64 max", uint64(math.MaxUint64), `18446744073709552000`},
		{"negative zero", math.Copysign(0, -1), `0`},
		{"negative", -3, `-3`},
		{"fraction", 0.1, `0.1`},
		{"float32", float32(0.1), `0.1`},
		{"small", 1e-7, `1e-7`},
		{"below 1e21", 1e20, `100000000000000000000`},
		{"1e21", 1e21, `1e+21`},
		{"json.Number fraction", json.Number("2.50"), `2.5`},
		{"json.Number exponent", json.Number("1E2"), `100`},
		{"json.Number big int", json.Number("123456789012345678901234567890"), `1.2345678901234568e+29`},
		{"json.Number jq style", json.Number("5.3e-06"), `0.0000053`},
		{"html", "a<b>&c", `"a<b>&c"`},
		{"control", "t\tn\nq\"b\\", `"t\tn\nq\"b\\"`},
		{"line separator", "\u2028", "\"\u2028\""}, // JCS escapes only what JSON requires
		{"other controls", "\b\f\x01\x1f", `"\b\f\u0001\u001f"`},
		{"keys by UTF-16", map[string]any{"\uE000": 1, "\U0001F600": 2}, "{\"\U0001F600\":2,\"\uE000\":1}"},
		{"unicode", "é日", `"é日"`},
		{"invalid utf8", "a\xffb", "\"a\uFFFDb\""}, // replaced, as encoding/json does
		{"bool", true, `true`},
		{"nil", nil, `null`},
		{"list", []any{2.0, "x", []int{1}}, `[2,"x",[1]]`},
		{"map sorted", map[string]any{"b": 1, "a": map[string]int{"d": 1, "c": 2}}, `{"a":{"c":2,"d":1},"b":1}`},
		{"struct", struct {
			B int `json:"b"`
			A int `json:"a"`
		}{1, 2}, `{"a":2,"b":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := smallCert()
			c.Checks[0].Results = map[string]any{"x": tt.v}
			body, err := c.Body()
			if err != nil {
				t.Fatalf("Body(%v): %v", tt.v, err)
			}
			want := `"results":{"x":` + tt.want + `}`
			if !bytes.Contains(body, []byte(want)) {
				t.Errorf("Body(%#v) = %s, want it to contain %s", tt.v, body, want)
			}
		})
	}
}

func TestBodyRejectsNonFinite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(c *certs.Certificate)
	}{
		{"NaN in results", func(c *certs.Certificate) { c.Checks[0].Results["max_abs_err"] = math.NaN() }},
		{"Inf in inputs", func(c *certs.Certificate) { c.Checks[0].Inputs = map[string]any{"x": math.Inf(1)} }},
		{"NaN in a list", func(c *certs.Certificate) { c.Checks[0].Results["l"] = []any{1.0, math.NaN()} }},
		{"NaN in []float64", func(c *certs.Certificate) { c.Checks[0].Results["l"] = []float64{math.NaN()} }},
		{"NaN float32", func(c *certs.Certificate) { c.Config["x"] = float32(math.NaN()) }},
		{"NaN deep", func(c *certs.Certificate) { c.Config["x"] = map[string]any{"y": []any{math.NaN()}} }},
		{"NaN in a typed slice", func(c *certs.Certificate) { c.Config["x"] = [][]float64{{math.NaN()}} }},
		{"NaN median", func(c *certs.Certificate) { c.Latency.MedianMS = math.NaN() }},
		{"Inf time", func(c *certs.Certificate) { c.Latency.TimesMS[1] = math.Inf(-1) }},
		{"year 10000", func(c *certs.Certificate) { c.IssuedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"bad json.Number", func(c *certs.Certificate) { c.Config["x"] = json.Number("1.2.3") }},
		{"unencodable", func(c *certs.Certificate) { c.Config["x"] = make(chan int) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := smallCert()
			tt.modify(c)
			if _, err := c.Body(); !errors.Is(err, certs.ErrMalformed) {
				t.Errorf("Body() = %v, want ErrMalformed", err)
			}
			if _, err := c.Encode(); !errors.Is(err, certs.ErrMalformed) {
				t.Errorf("Encode() = %v, want ErrMalformed", err)
			}
		})
	}
}

// sentinels are the errors verification reports.
var sentinels = []error{certs.ErrMalformed, certs.ErrNotCanonical, certs.ErrBadID, certs.ErrWrongIssuer, certs.ErrBadSignature}

func isSentinel(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

func TestVerifyBytesDetectsEveryFlippedByte(t *testing.T) {
	t.Parallel()
	key, pub := testKey(1)
	data := signed(t, smallCert(), key)
	if _, err := certs.VerifyBytes(data, pub); err != nil {
		t.Fatalf("VerifyBytes(original) = %v", err)
	}
	sigStart := bytes.Index(data, []byte(`"signature":"`)) + len(`"signature":"`)
	sigEnd := sigStart + bytes.IndexByte(data[sigStart:], '"')
	inSignature := func(i int) bool { return i >= sigStart && i < sigEnd }

	for _, mask := range []byte{0x01, 0x02, 0x20, 0x80, 0xff} {
		for i := range data {
			flipped := bytes.Clone(data)
			flipped[i] ^= mask
			_, err := certs.VerifyBytes(flipped, pub)
			switch {
			case err == nil:
				t.Fatalf("mask %#x byte %d (%q -> %q): VerifyBytes = nil, want an error", mask, i, data[i], flipped[i])
			case !isSentinel(err):
				t.Errorf("mask %#x byte %d: VerifyBytes = %v, want one of the sentinels", mask, i, err)
			case mask != 0x01: // the other masks may break the JSON anywhere
			case inSignature(i) && !errors.Is(err, certs.ErrBadSignature):
				t.Errorf("byte %d in the signature: VerifyBytes = %v, want ErrBadSignature", i, err)
			case !inSignature(i) && !errors.Is(err, certs.ErrBadID) && !errors.Is(err, certs.ErrNotCanonical) && !errors.Is(err, certs.ErrMalformed):
				t.Errorf("byte %d: VerifyBytes = %v, want ErrBadID, ErrNotCanonical or ErrMalformed", i, err)
			}
		}
	}

	at := func(s string, skip int) int {
		i := bytes.Index(data, []byte(s))
		if i < 0 {
			t.Fatalf("%s not in %s", s, data)
		}
		return i + skip
	}
	tests := []struct {
		name string
		pos  int
		want error
	}{
		{"digit of latency median", at(`"median_ms":1.25`, len(`"median_ms":1.`)), certs.ErrBadID},
		{"letter of kernel name", at(`"kernel":"sgemm"`, len(`"kernel":"s`)), certs.ErrBadID},
		{"config value", at(`"tile":8`, len(`"tile":`)), certs.ErrBadID},
		{"digit of id", at(`"id":"`, len(`"id":"`)+5), certs.ErrBadID},
		{"letter of issuer", at(`"issuer":"ed25519:`, len(`"issuer":"ed25519:`)+3), certs.ErrBadID},
		{"first signature char", sigStart, certs.ErrBadSignature},
		{"middle signature char", (sigStart + sigEnd) / 2, certs.ErrBadSignature},
		{"signature padding", sigEnd - 1, certs.ErrBadSignature},
		{"last data char of signature", sigEnd - 3, certs.ErrBadSignature},
		{"field name", at(`"kernel"`, 2), certs.ErrMalformed},
		{"structural colon", at(`"v":1`, 3), certs.ErrMalformed},
		{"version", at(`"v":1`, 4), certs.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			flipped := bytes.Clone(data)
			flipped[tt.pos] ^= 0x01
			if _, err := certs.VerifyBytes(flipped, pub); !errors.Is(err, tt.want) {
				t.Errorf("VerifyBytes(byte %d %q -> %q) = %v, want %v", tt.pos, data[tt.pos], flipped[tt.pos], err, tt.want)
			}
		})
	}
}

// Whitespace outside strings carries no content: a re-indented
// certificate still verifies, and is the same certificate.
func TestVerifyBytesWhitespace(t *testing.T) {
	t.Parallel()
	key, pub := testKey(1)
	data := signed(t, smallCert(), key)
	want, err := certs.VerifyBytes(data, pub)
	if err != nil {
		t.Fatal(err)
	}
	indent := func(prefix, ind string) []byte {
		var b bytes.Buffer
		if err := json.Indent(&b, data, prefix, ind); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"trailing newline", append(bytes.Clone(data), '\n')},
		{"leading space", append([]byte(" "), data...)},
		{"indented two spaces", indent("", "  ")},
		{"indented with tabs, newline", append(indent("", "\t"), '\n')},
		{"CRLF", bytes.ReplaceAll(indent("", "    "), []byte("\n"), []byte("\r\n"))},
	}
	for _, tt := range tests {
		got, err := certs.VerifyBytes(tt.data, pub)
		if err != nil {
			t.Errorf("VerifyBytes(%s) = %v, want it verified", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("VerifyBytes(%s) = %+v, want %+v", tt.name, got, want)
		}
	}
}

// Content that decodes to the certificate only by being normalised (an
// offset time, an empty details object) is not what was signed.
func TestVerifyBytesNotCanonical(t *testing.T) {
	t.Parallel()
	key, pub := testKey(1)
	data := signed(t, smallCert(), key)
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"offset time", bytes.Replace(data, []byte(`03:04:05.5Z`), []byte(`04:04:05.5+01:00`), 1), certs.ErrNotCanonical},
		{"empty details", bytes.Replace(data, []byte(`"device":"cpu/x/avx2/2c"`), []byte(`"details":{},"device":"cpu/x/avx2/2c"`), 1), certs.ErrNotCanonical},
		{"duplicate key", bytes.Replace(data, []byte(`"tile":8`), []byte(`"tile":8,"tile":8`), 1), certs.ErrMalformed},
		{"one digit of a value", bytes.Replace(data, []byte(`"median_ms":1.25`), []byte(`"median_ms":1.26`), 1), certs.ErrBadID},
		{"a value's exponent", bytes.Replace(data, []byte(`"max_abs_err":0.000001`), []byte(`"max_abs_err":1e-05`), 1), certs.ErrBadID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if bytes.Equal(tt.data, data) {
				t.Fatal("test case does not change the data")
			}
			_, err := certs.VerifyBytes(tt.data, pub)
			if !errors.Is(err, tt.want) {
				t.Errorf("VerifyBytes = %v, want %v", err, tt.want)
			}
		})
	}
}

// Verification compares canonical JSON (RFC 8785): the same content
// written another way verifies, and is the same certificate.
func TestVerifyBytesSameContent(t *testing.T) {
	t.Parallel()
	key, pub := testKey(1)
	data := signed(t, smallCert(), key)
	want, err := certs.VerifyBytes(data, pub)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"longer number", bytes.Replace(data, []byte(`"median_ms":1.25`), []byte(`"median_ms":1.250`), 1)},
		{"exponent", bytes.Replace(data, []byte(`"tile":8`), []byte(`"tile":8e0`), 1)},
		{"integer written as a fraction", bytes.Replace(data, []byte(`"samples":3`), []byte(`"samples":3.0`), 1)},
		{"jq 1.6's number style", bytes.Replace(data, []byte(`"max_abs_err":0.000001`), []byte(`"max_abs_err":1e-06`), 1)},
		{"escaped letter", bytes.Replace(data, []byte(`"sgemm"`), []byte(`"\u0073gemm"`), 1)},
		{"key order", bytes.Replace(data, []byte(`"tile":8,"unroll":2`), []byte(`"unroll":2,"tile":8`), 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if bytes.Equal(tt.data, data) {
				t.Fatal("test case does not change the data")
			}
			got, err := certs.VerifyBytes(tt.data, pub)
			if err != nil {
				t.Fatalf("VerifyBytes = %v, want it verified", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("VerifyBytes = %+v, want %+v", got, want)
			}
		})
	}
}

func TestVerifyErrors(t *testing.T) {
	t.Parallel()
	key, pub := testKey(1)
	otherKey, otherPub := testKey(2)
	tests := []struct {
		name   string
		modify func(c *certs.Certificate)
		pub    ed25519.PublicKey
		want   error
	}{
		{"wrong public key", nil, otherPub, certs.ErrWrongIssuer},
		{"changed kernel", func(c *certs.Certificate) { c.Job.Kernel = "dgemm" }, pub, certs.ErrBadID},
		{"changed result", func(c *certs.Certificate) { c.Checks[0].Results["max_abs_err"] = 2e-6 }, pub, certs.ErrBadID},
		{"flipped verdict", func(c *certs.Certificate) { c.Checks[0].Passed = false }, pub, certs.ErrBadID},
		{"changed time", func(c *certs.Certificate) { c.IssuedAt = c.IssuedAt.Add(time.Nanosecond) }, pub, certs.ErrBadID},
		{"changed issuer", func(c *certs.Certificate) { c.Issuer = certs.KeyID(otherPub) }, pub, certs.ErrBadID},
		{"never signed", func(c *certs.Certificate) { c.ID, c.Signature = "", "" }, pub, certs.ErrBadID},
		{"empty signature", func(c *certs.Certificate) { c.Signature = "" }, pub, certs.ErrBadSignature},
		{"signature not base64", func(c *certs.Certificate) { c.Signature = "not base64!" }, pub, certs.ErrBadSignature},
		{"short signature", func(c *certs.Certificate) { c.Signature = c.Signature[:40] + "==" }, pub, certs.ErrBadSignature},
		{"signature with newline", func(c *certs.Certificate) { c.Signature = c.Signature[:40] + "\n" + c.Signature[40:] }, pub, certs.ErrBadSignature},
		{"signature by another key", func(c *certs.Certificate) {
			forged := *c
			forged.Issuer = ""
			if err := certs.Sign(&forged, otherKey); err != nil {
				t.Fatal(err)
			}
			c.Signature = forged.Signature
		}, pub, certs.ErrBadSignature},
		{"version 2", func(c *certs.Certificate) { c.V = 2 }, pub, certs.ErrMalformed},
		{"short public key", nil, pub[:31], certs.ErrMalformed},
		{"nil public key", nil, nil, certs.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := smallCert()
			data := signed(t, c, key)
			if tt.modify != nil {
				tt.modify(c)
			}
			err := certs.Verify(c, tt.pub)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
			if tt.modify == nil {
				if _, err := certs.VerifyBytes(data, tt.pub); !errors.Is(err, tt.want) {
					t.Errorf("VerifyBytes = %v, want %v", err, tt.want)
				}
			}
		})
	}
	if err := certs.Verify(nil, pub); !errors.Is(err, certs.ErrMalformed) {
		t.Errorf("Verify(nil) = %v, want ErrMalformed", err)
	}
}

func TestBadIDMessage(t *testing.T) {
	t.Parallel()
	key, pub := testKey(1)
	c := smallCert()
	signed(t, c, key)
	c.Latency.MedianMS = 0.25
	err := certs.Verify(c, pub)
	if err == nil || !strings.Contains(err.Error(), "id does not match the content: a field was changed") {
		t.Errorf("Verify(changed) = %v, want the ErrBadID message", err)
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	key, _ := testKey(1)
	data := string(signed(t, smallCert(), key))
	replace := func(old, new string) string {
		if !strings.Contains(data, old) {
			t.Fatalf("%s not in %s", old, data)
		}
		return strings.Replace(data, old, new, 1)
	}
	tests := []struct {
		name    string
		data    string
		wantErr bool
	}{
		{"canonical", data, false},
		{"indented is fine for Decode", indent(t, data), false},
		{"empty", "", true},
		{"not json", "certificate", true},
		{"list", "[]", true},
		{"null", "null", true},
		{"truncated", data[:len(data)/2], true},
		{"trailing data", data + "{}", true},
		{"trailing garbage", data + "x", true},
		{"unknown field", replace(`"v":1`, `"v":1,"extra":0`), true},
		{"unknown nested field", replace(`"samples":3`, `"samples":3,"mean_ms":1`), true},
		{"field in other case", replace(`"kernel"`, `"Kernel"`), true},
		{"version 2", replace(`"v":1`, `"v":2`), true},
		{"version 1.0 is 1", replace(`"v":1`, `"v":1.0`), false},
		{"version 1.5", replace(`"v":1`, `"v":1.5`), true},
		{"version string", replace(`"v":1`, `"v":"1"`), true},
		{"missing version", replace(`,"v":1`, ``), true},
		{"missing latency", replace(`"latency":{`, `"latency_":{`), true},
		{"duplicate key", replace(`"tile":8`, `"tile":8,"tile":9`), true},
		{"duplicate top key", replace(`"v":1`, `"v":1,"v":1`), true},
		{"samples not an integer", replace(`"samples":3`, `"samples":3.5`), true},
		{"number out of range", replace(`"median_ms":1.25`, `"median_ms":1e400`), true},
		{"config value out of range", replace(`"tile":8`, `"tile":-1e999`), true},
		{"passed not a bool", replace(`"passed":true`, `"passed":1`), true},
		{"null config", replace(`"config":{"tile":8,"unroll":2}`, `"config":null`), true},
		{"null checks", replace(`"checks":[`, `"checks":null,"x":[`), true},
		{"details not strings", replace(`"device":"cpu/x/avx2/2c"`, `"details":{"a":1},"device":"cpu/x/avx2/2c"`), true},
		{"bad time", replace(`2025-01-02T03:04:05.5Z`, `2025-01-02 03:04:05`), true},
		{"times not numbers", replace(`"times_ms":[1.2,`, `"times_ms":["1.2",`), true},
		{"deep nesting", replace(`"tile":8`, `"tile":`+strings.Repeat("[", 10000)+strings.Repeat("]", 10000)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := certs.Decode([]byte(tt.data))
			if tt.wantErr {
				if !errors.Is(err, certs.ErrMalformed) {
					t.Errorf("Decode = %v, want ErrMalformed", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode = %v, want nil", err)
			}
			if c.Job.Kernel != "sgemm" || c.Latency.MedianMS != 1.25 || len(c.Checks) != 1 || c.IssuedAt.Location() != time.UTC {
				t.Errorf("Decode = %+v", c)
			}
			if v, ok := c.Config["tile"].(float64); !ok || v != 8 {
				t.Errorf("Config[tile] = %#v, want float64(8)", c.Config["tile"])
			}
		})
	}
}

// An integer wider than a double holds is signed as the double it rounds
// to (RFC 8785), so a tool that reads numbers as doubles (jq) keeps it.
func TestWideIntegersSignedAsDoubles(t *testing.T) {
	t.Parallel()
	key, pub := testKey(1)
	c := smallCert()
	c.Config = map[string]any{"big": uint64(1<<53 + 1), "small": 3}
	data := signed(t, c, key)
	if !bytes.Contains(data, []byte(`"big":9007199254740992`)) {
		t.Errorf("Encode = %s, want big as 9007199254740992", data)
	}
	got, err := certs.VerifyBytes(data, pub)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := got.Config["big"].(float64); !ok || f != 1<<53 {
		t.Errorf(`Config["big"] = %#v, want float64(1<<53)`, got.Config["big"])
	}
	if f, ok := got.Config["small"].(float64); !ok || f != 3 {
		t.Errorf(`Config["small"] = %#v, want float64(3)`, got.Config["small"])
	}
}

func TestPassed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		checks []bool
		want   bool
	}{
		{"all pass", []bool{true, true, true}, true},
		{"one fails", []bool{true, false, true}, false},
		{"one check", []bool{true}, true},
		{"no checks", nil, false},
	}
	for _, tt := range tests {
		c := &certs.Certificate{}
		for i, p := range tt.checks {
			c.Checks = append(c.Checks, certs.Check{Name: string(rune('a' + i)), Passed: p})
		}
		if got := c.Passed(); got != tt.want {
			t.Errorf("%s: Passed() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestGolden pins the encoding: a change to these bytes breaks every
// certificate already issued.
func TestGolden(t *testing.T) {
	t.Parallel()
	key, pub := testKey(1)
	data := signed(t, sampleCert(), key)
	path := filepath.Join("testdata", "sample.cert.golden")
	if *update {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("Encode() differs from %s:\n got %s\nwant %s", path, data, want)
	}
	if _, err := certs.VerifyBytes(want, pub); err != nil {
		t.Errorf("VerifyBytes(%s) = %v", path, err)
	}
}

func indent(t *testing.T, s string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(s), "", "  "); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
