package certs

import "errors"

// Errors of decoding and verification. Each is returned wrapped with detail;
// test for them with errors.Is.
var (
	// ErrMalformed is returned when a certificate, a key or a public key cannot be parsed or encoded.
	ErrMalformed = errors.New("malformed")
	// ErrNotCanonical is returned by VerifyBytes when the bytes hold content, compared in canonical JSON, that the certificate they decode to does not encode to.
	ErrNotCanonical = errors.New("certificate content is not canonical: a field was rewritten")
	// ErrBadID is returned when a certificate's id is not the hash of its content.
	ErrBadID = errors.New("id does not match the content: a field was changed")
	// ErrWrongIssuer is returned when a certificate names another key than the one it is verified with.
	ErrWrongIssuer = errors.New("certificate was issued by another key")
	// ErrBadSignature is returned when a certificate's signature is missing, unreadable or does not verify.
	ErrBadSignature = errors.New("bad signature")
)

// Errors of key files.
var (
	// ErrKeyPermissions is returned when a private key file is accessible by group or others.
	ErrKeyPermissions = errors.New("private key file is accessible by group or others")
)
