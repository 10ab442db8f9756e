package certs

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// keyPrefix starts key ids and formatted public keys.
const keyPrefix = "ed25519:"

// pemType is the PEM block type of a PKCS #8 private key.
const pemType = "PRIVATE KEY"

// KeyID returns the id of a public key: "ed25519:" followed by the first 16
// hex digits of the SHA-256 of its bytes.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return keyPrefix + hex.EncodeToString(sum[:8])
}

// FormatPublicKey returns pub as "ed25519:" followed by the standard
// base64 (padded) of its 32 bytes, the form ParsePublicKey reads.
func FormatPublicKey(pub ed25519.PublicKey) string {
	return keyPrefix + base64.StdEncoding.EncodeToString(pub)
}

// ParsePublicKey parses a public key written by FormatPublicKey; whitespace
// around it is ignored. Errors are ErrMalformed and say what is wrong.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("parse public key: %w: empty", ErrMalformed)
	}
	b64, ok := strings.CutPrefix(s, keyPrefix)
	if !ok {
		if alg, _, found := strings.Cut(s, ":"); found && len(alg) < 32 && !strings.ContainsAny(alg, " \t") {
			return nil, fmt.Errorf("parse public key %s: %w: algorithm %s, want %q", clip(s), ErrMalformed, clip(alg), strings.TrimSuffix(keyPrefix, ":"))
		}
		return nil, fmt.Errorf("parse public key %s: %w: missing the %q prefix", clip(s), ErrMalformed, keyPrefix)
	}
	if isKeyID(b64) {
		return nil, fmt.Errorf("parse public key %s: %w: this is a key id, not a public key", clip(s), ErrMalformed)
	}
	b, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || base64.StdEncoding.EncodeToString(b) != b64 {
		detail := "not standard padded base64"
		if err != nil {
			detail += " (" + err.Error() + ")"
		}
		return nil, fmt.Errorf("parse public key %s: %w: %s", clip(s), ErrMalformed, detail)
	}
	if len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("parse public key %s: %w: %d bytes, want %d", clip(s), ErrMalformed, len(b), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}

// isKeyID reports whether s is the part of a KeyID after its prefix.
func isKeyID(s string) bool {
	if len(s) != 16 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// LoadOrCreateKey reads the Ed25519 private key in the PEM "PRIVATE KEY"
// (PKCS #8) file at path, or, when there is none, creates one with mode
// 0600 (and its directory with mode 0700) and reports created. A key file
// accessible by group or others is ErrKeyPermissions, naming the file and
// its mode. A file that is not such a key is ErrMalformed. Concurrent
// callers agree on one key: the file appears complete or not at all. It
// never logs.
func LoadOrCreateKey(path string) (key ed25519.PrivateKey, created bool, err error) {
	if path == "" {
		return nil, false, errors.New("load key: empty path")
	}
	key, err = loadKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, false, err
	}
	if err := createKey(path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another process created it first: use theirs.
			key, err = loadKey(path)
			return key, false, err
		}
		return nil, false, err
	}
	key, err = loadKey(path)
	if err != nil {
		return nil, false, err
	}
	return key, true, nil
}

func loadKey(path string) (ed25519.PrivateKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("load key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("load key %s: %w: not a regular file (%v)", path, ErrMalformed, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("load key %s: %w: mode %#o, want 0600 (chmod 600 %s)", path, ErrKeyPermissions, perm, path)
	}
	const maxKeyFile = 64 << 10
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("load key %s: %w", path, err)
	}
	if len(data) > maxKeyFile {
		return nil, fmt.Errorf("load key %s: %w: file larger than %d bytes", path, ErrMalformed, maxKeyFile)
	}
	return parsePrivateKey(path, data)
}

func parsePrivateKey(path string, data []byte) (ed25519.PrivateKey, error) {
	block, rest := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("load key %s: %w: no PEM block", path, ErrMalformed)
	}
	if block.Type != pemType {
		return nil, fmt.Errorf("load key %s: %w: PEM block %q, want %q", path, ErrMalformed, block.Type, pemType)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("load key %s: %w: data after the PEM block", path, ErrMalformed)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("load key %s: %w: not a PKCS #8 key: %w", path, ErrMalformed, err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("load key %s: %w: a %T, want an Ed25519 key", path, ErrMalformed, k)
	}
	return key, nil
}

// createKey writes a new key to path, failing with fs.ErrExist when path
// exists. It writes a temporary file and links it into place, so that path
// never holds a partial key.
func createKey(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create key %s: %w", path, err)
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("create key %s: %w", path, err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("create key %s: %w", path, err)
	}
	data := pem.EncodeToMemory(&pem.Block{Type: pemType, Bytes: der})

	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create key %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600; say so in case that ever changes.
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create key %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("create key %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: some file systems cannot sync a directory
		d.Close()
	}
	return nil
}
