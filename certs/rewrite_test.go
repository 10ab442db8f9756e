package certs_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/quasim/quasim/certs"
)

// rewriteCert returns a certificate holding what other tools write
// differently: a value below 1e-5 (jq 1.6 and Python write 0.0000053 as
// 5.3e-06), a tolerance below 1e-6 and a non-ASCII string (Python escapes
// it).
func rewriteCert(t *testing.T) ([]byte, ed25519.PublicKey) {
	key, pub := testKey(3)
	c := smallCert()
	c.Checks[0].Results = map[string]any{"max_abs_err": 5.3e-06, "tolerance": 1e-07, "tolerance_kind": "abs"}
	c.Checks[0].Note = "timed in µs"
	data := signed(t, c, key)
	if !bytes.Contains(data, []byte(`"max_abs_err":0.0000053`)) || !bytes.Contains(data, []byte("µ")) {
		t.Fatalf("certificate does not hold the values this test needs: %s", data)
	}
	return data, pub
}

var jsonNumber = regexp.MustCompile(`-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?`)

// jq16Numbers rewrites numbers outside strings as jq 1.6 prints them: the
// shortest digits that read back, with a two-digit exponent below 1e-4
// ("5.3e-06", "1e-07").
func jq16Numbers(t *testing.T, data []byte) []byte {
	var out bytes.Buffer
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			out.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
			out.WriteByte(c)
		case c == '-' || c >= '0' && c <= '9':
			lit := jsonNumber.Find(data[i:])
			f, err := strconv.ParseFloat(string(lit), 64)
			if err != nil {
				t.Fatal(err)
			}
			if f != 0 && f > -1e-4 && f < 1e-4 {
				m, e, _ := bytes.Cut([]byte(strconv.FormatFloat(f, 'e', -1, 64)), []byte("e"))
				n, _ := strconv.Atoi(string(e))
				fmt.Fprintf(&out, "%se%+03d", m, n)
			} else {
				out.Write(lit)
			}
			i += len(lit) - 1
		default:
			out.WriteByte(c)
		}
	}
	return out.Bytes()
}

// A certificate rewritten by other JSON tools verifies; a one-byte change
// of a value in the rewritten form still fails.
func TestVerifyRewrittenByOtherTools(t *testing.T) {
	t.Parallel()
	data, pub := rewriteCert(t)
	want, err := certs.VerifyBytes(data, pub)
	if err != nil {
		t.Fatal(err)
	}
	tool := func(t *testing.T, name string, args ...string) []byte {
		if _, err := exec.LookPath(name); err != nil {
			t.Skipf("skipping: %s is not installed (%v); the jq 1.6 number style case runs without it", name, err)
		}
		cmd := exec.Command(name, args...)
		cmd.Stdin = bytes.NewReader(data)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out
	}
	tests := []struct {
		name    string
		rewrite func(t *testing.T) []byte
		changed string // a value as the rewritten form writes it
	}{
		{"jq 1.6's number style, indented", func(t *testing.T) []byte {
			var b bytes.Buffer
			json.Indent(&b, jq16Numbers(t, data), "", "  ")
			return b.Bytes()
		}, "5.3e-06"},
		{"python3 json module", func(t *testing.T) []byte {
			return tool(t, "python3", "-c", "import json, sys; json.dump(json.load(sys.stdin), sys.stdout, indent=2)")
		}, "5.3e-06"},
		{"jq", func(t *testing.T) []byte { return tool(t, "jq", ".") }, "e-06"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := tt.rewrite(t)
			if bytes.Contains(out, []byte("0.0000053")) {
				t.Fatalf("the rewrite kept 0.0000053, so it tests nothing:\n%s", out)
			}
			got, err := certs.VerifyBytes(out, pub)
			if err != nil {
				t.Fatalf("VerifyBytes(rewritten) = %v\n%s", err, out)
			}
			if got.ID != want.ID || got.Checks[0].Note != want.Checks[0].Note {
				t.Errorf("VerifyBytes(rewritten) = %+v, want %+v", got, want)
			}
			// One byte of a value, in the rewritten form: 5.3 -> 5.4.
			i := bytes.Index(out, []byte("5.3e-"))
			if i < 0 {
				t.Fatalf("no %s in\n%s", tt.changed, out)
			}
			bad := bytes.Clone(out)
			bad[i+2] = '4'
			if _, err := certs.VerifyBytes(bad, pub); !errors.Is(err, certs.ErrBadID) {
				t.Errorf("VerifyBytes(5.3e-06 -> 5.4e-06) = %v, want ErrBadID", err)
			}
		})
	}
}

// Certificates signed before verification went by RFC 8785 keep verifying
// (dual verification: the legacy body is tried when the JCS one does not
// hash to the id). testdata/legacy-exotic.cert.json was signed by the
// earlier code with test key 7 and holds every value whose two canonical
// forms differ: -0, an integer wider than a double, U+2028, and keys whose
// UTF-8 and UTF-16 orders differ.
func TestLegacyCertificatesVerify(t *testing.T) {
	t.Parallel()
	_, pub := testKey(7)
	data, err := os.ReadFile("testdata/legacy-exotic.cert.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := certs.VerifyBytes(data, pub)
	if err != nil {
		t.Fatalf("VerifyBytes(legacy) = %v", err)
	}
	if err := certs.Verify(c, pub); err != nil {
		t.Errorf("Verify(decoded legacy) = %v", err)
	}
	if n, ok := c.Config["seed"].(json.Number); !ok || n != "12345678901234567891" {
		t.Errorf(`Config["seed"] = %#v, want json.Number("12345678901234567891")`, c.Config["seed"])
	}
	var b bytes.Buffer
	json.Indent(&b, data, "", "\t")
	if _, err := certs.VerifyBytes(b.Bytes(), pub); err != nil {
		t.Errorf("VerifyBytes(legacy, indented) = %v", err)
	}
	// Its content differs from JCS: the legacy body is what verifies.
	body, err := c.Body()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(body, []byte(`12345678901234567891`)) {
		t.Errorf("JCS body keeps the wide integer: %s", body)
	}
	for _, tt := range []struct{ from, to string }{
		{`12345678901234567891`, `12345678901234567892`}, // one digit of a wide integer
		{`"tile":8`, `"tile":9`},
		{`"line\u2028separator"`, `"line\u2029separator"`},
	} {
		bad := bytes.Replace(data, []byte(tt.from), []byte(tt.to), 1)
		if bytes.Equal(bad, data) {
			t.Fatalf("%s not in %s", tt.from, data)
		}
		if _, err := certs.VerifyBytes(bad, pub); !errors.Is(err, certs.ErrBadID) {
			t.Errorf("VerifyBytes(legacy, %s -> %s) = %v, want ErrBadID", tt.from, tt.to, err)
		}
	}
}
