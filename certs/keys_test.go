package certs_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/quasim/quasim/certs"
)

func TestKeyIDAndFormat(t *testing.T) {
	t.Parallel()
	_, pub := testKey(1)
	id := certs.KeyID(pub)
	if !regexp.MustCompile(`^ed25519:[0-9a-f]{16}$`).MatchString(id) {
		t.Errorf("KeyID = %q, want ed25519: and 16 hex digits", id)
	}
	_, other := testKey(2)
	if certs.KeyID(other) == id {
		t.Errorf("two keys share KeyID %q", id)
	}
	s := certs.FormatPublicKey(pub)
	if want := "ed25519:" + base64.StdEncoding.EncodeToString(pub); s != want {
		t.Errorf("FormatPublicKey = %q, want %q", s, want)
	}
	for _, in := range []string{s, "  " + s + "\n", "\t" + s + "\r\n"} {
		got, err := certs.ParsePublicKey(in)
		if err != nil || !got.Equal(pub) {
			t.Errorf("ParsePublicKey(%q) = %x, %v, want %x", in, got, err, pub)
		}
	}
}

func TestParsePublicKeyErrors(t *testing.T) {
	t.Parallel()
	_, pub := testKey(1)
	good := certs.FormatPublicKey(pub)
	b64 := strings.TrimPrefix(good, "ed25519:")
	tests := []struct {
		name string
		in   string
		want string // in the message
	}{
		{"empty", "", "empty"},
		{"blank", " \n", "empty"},
		{"no prefix", b64, `missing the "ed25519:" prefix`},
		{"other algorithm", "rsa:" + b64, `algorithm "rsa"`},
		{"ssh form", "ssh-ed25519 " + b64, `missing the "ed25519:" prefix`},
		{"upper-case prefix", "ED25519:" + b64, `algorithm "ED25519"`},
		{"key id instead", certs.KeyID(pub), "key id, not a public key"},
		{"not base64", "ed25519:not*base64", "base64"},
		{"url base64", "ed25519:" + base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32)), "base64"},
		{"unpadded", "ed25519:" + strings.TrimRight(b64, "="), "base64"},
		{"inner newline", "ed25519:" + b64[:10] + "\n" + b64[10:], "base64"},
		{"inner space", "ed25519:" + b64[:10] + " " + b64[10:], "base64"},
		{"short", "ed25519:" + base64.StdEncoding.EncodeToString(pub[:31]), "31 bytes, want 32"},
		{"long", "ed25519:" + base64.StdEncoding.EncodeToString(append(bytes.Clone(pub), 0)), "33 bytes, want 32"},
		{"private key", "ed25519:" + base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(make([]byte, 32))), "64 bytes, want 32"},
		{"prefix only", "ed25519:", "0 bytes, want 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := certs.ParsePublicKey(tt.in)
			if err == nil {
				t.Fatalf("ParsePublicKey(%q) = %x, want an error", tt.in, got)
			}
			if !errors.Is(err, certs.ErrMalformed) {
				t.Errorf("ParsePublicKey(%q) = %v, want ErrMalformed", tt.in, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParsePublicKey(%q) = %v, want it to say %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "sub", "issuer.key")

	key, created, err := certs.LoadOrCreateKey(path)
	if err != nil {
		t.Fatalf("LoadOrCreateKey(new) = %v", err)
	}
	if !created {
		t.Error("LoadOrCreateKey(new) created = false, want true")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("key file mode = %#o, want 0600", perm)
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if perm := di.Mode().Perm(); perm != 0o700 {
		t.Errorf("key directory mode = %#o, want 0700", perm)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("key directory holds %d entries, want only the key", len(entries))
	}

	// The file is what x509.MarshalPKCS8PrivateKey writes.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		t.Fatalf("key file is not a PEM PRIVATE KEY:\n%s", data)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !key.Equal(parsed) {
		t.Error("returned key differs from the file's")
	}

	again, created, err := certs.LoadOrCreateKey(path)
	if err != nil {
		t.Fatalf("LoadOrCreateKey(existing) = %v", err)
	}
	if created {
		t.Error("LoadOrCreateKey(existing) created = true, want false")
	}
	if !again.Equal(key) {
		t.Error("reloaded key differs")
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = certs.LoadOrCreateKey(path)
	if !errors.Is(err, certs.ErrKeyPermissions) {
		t.Fatalf("LoadOrCreateKey(0644) = %v, want ErrKeyPermissions", err)
	}
	if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "0644") {
		t.Errorf("LoadOrCreateKey(0644) = %q, want it to name %s and 0644", msg, path)
	}
}

func TestLoadOrCreateKeyConcurrent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "issuer.key")
	const n = 8
	keys := make([]ed25519.PrivateKey, n)
	created := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { keys[i], created[i], errs[i] = certs.LoadOrCreateKey(path) })
	}
	wg.Wait()
	creators := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if !keys[i].Equal(keys[0]) {
			t.Errorf("caller %d got another key", i)
		}
		if created[i] {
			creators++
		}
	}
	if creators != 1 {
		t.Errorf("%d callers report creating the key, want 1", creators)
	}
}

func TestLoadKeyErrors(t *testing.T) {
	t.Parallel()
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, err := x509.MarshalPKCS8PrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	edDER, err := x509.MarshalPKCS8PrivateKey(ed25519.NewKeyFromSeed(make([]byte, 32)))
	if err != nil {
		t.Fatal(err)
	}
	pemOf := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	tests := []struct {
		name string
		data []byte
		mode fs.FileMode
		want error
		msg  string
	}{
		{"group readable", pemOf("PRIVATE KEY", edDER), 0o640, certs.ErrKeyPermissions, "0640"},
		{"world readable", pemOf("PRIVATE KEY", edDER), 0o604, certs.ErrKeyPermissions, "0604"},
		{"group writable", pemOf("PRIVATE KEY", edDER), 0o620, certs.ErrKeyPermissions, "0620"},
		{"empty", nil, 0o600, certs.ErrMalformed, "no PEM block"},
		{"not PEM", []byte("hello"), 0o600, certs.ErrMalformed, "no PEM block"},
		{"wrong block", pemOf("EC PRIVATE KEY", ecDER), 0o600, certs.ErrMalformed, `"EC PRIVATE KEY"`},
		{"not ed25519", pemOf("PRIVATE KEY", ecDER), 0o600, certs.ErrMalformed, "want an Ed25519 key"},
		{"bad DER", pemOf("PRIVATE KEY", []byte{1, 2, 3}), 0o600, certs.ErrMalformed, "not a PKCS #8 key"},
		{"two blocks", append(pemOf("PRIVATE KEY", edDER), pemOf("PRIVATE KEY", edDER)...), 0o600, certs.ErrMalformed, "after the PEM block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "issuer.key")
			if err := os.WriteFile(path, tt.data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			key, created, err := certs.LoadOrCreateKey(path)
			if !errors.Is(err, tt.want) {
				t.Fatalf("LoadOrCreateKey = %v, want %v", err, tt.want)
			}
			if key != nil || created {
				t.Errorf("LoadOrCreateKey returned a key (created %v) with its error", created)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("LoadOrCreateKey = %q, want it to name %s and say %q", err, path, tt.msg)
			}
		})
	}

	t.Run("directory", func(t *testing.T) {
		t.Parallel()
		if _, _, err := certs.LoadOrCreateKey(t.TempDir()); err == nil {
			t.Error("LoadOrCreateKey(directory) = nil, want an error")
		}
	})
	t.Run("empty path", func(t *testing.T) {
		t.Parallel()
		if _, _, err := certs.LoadOrCreateKey(""); err == nil {
			t.Error(`LoadOrCreateKey("") = nil, want an error`)
		}
	})
	t.Run("parent is a file", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := certs.LoadOrCreateKey(filepath.Join(file, "issuer.key")); err == nil {
			t.Error("LoadOrCreateKey(under a file) = nil, want an error")
		}
	})
}

func TestLoadedKeySigns(t *testing.T) {
	t.Parallel()
	key, _, err := certs.LoadOrCreateKey(filepath.Join(t.TempDir(), "k"))
	if err != nil {
		t.Fatal(err)
	}
	pub := key.Public().(ed25519.PublicKey)
	c := smallCert()
	data := signed(t, c, key)
	parsed, err := certs.ParsePublicKey(certs.FormatPublicKey(pub))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := certs.VerifyBytes(data, parsed); err != nil {
		t.Errorf("VerifyBytes with the loaded key = %v", err)
	}
}
