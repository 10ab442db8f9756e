// Package certs defines quasim's certificates: signed statements that a
// config of a job passed verification, with the inputs and results of each
// check and the measured latency distribution.
//
// # Format
//
// A certificate is one JSON object. Its body is every field except "id" and
// "signature", written in the JSON Canonicalization Scheme (RFC 8785, JCS):
//
//   - object keys sorted by their UTF-16 code units, at every depth (the
//     maps of Config, Job.Details, Check.Inputs and Check.Results included);
//   - no whitespace outside strings;
//   - strings with only the escapes JSON requires (\", \\, \b, \f, \n,
//     \r, \t, \u00xx for other controls), all else as UTF-8;
//   - numbers as the IEEE double they denote, written as ECMAScript writes
//     it ("64", "0.1", "0.0000053", "1e-7", "1e+21", -0 as "0"); an integer
//     wider than 2^53 is the double it rounds to; NaN and infinities are an
//     error;
//   - issued_at in RFC 3339 with nanoseconds, in UTC ("2025-01-02T03:04:05.5Z").
//
// The "id" is the lowercase hex SHA-256 of the body and the "signature" the
// standard base64 (padded) Ed25519 signature of the body by the issuer's key;
// "issuer" names that key by KeyID. The stored and served form, from Encode,
// is the JCS of the whole object, "id" and "signature" included, with no
// trailing newline. Two certificates with equal content encode to the same
// bytes whatever the order their maps were filled in.
//
// # Verification
//
// VerifyBytes verifies a certificate offline from its bytes and the
// issuer's public key: it decodes strictly, recomputes the body, checks the
// id, the issuer and the signature, and requires the JCS of the bytes to be
// the certificate's encoding. A certificate re-indented or re-written by
// another JSON tool (jq 1.6 writes 0.0000053 as 5.3e-06, Python's json
// module escapes µ as \u00b5) keeps its JCS, so it verifies; a changed
// value changes the JCS and does not. Content that decodes to the same
// certificate only once normalised (an offset time, an empty details
// object) is ErrNotCanonical. Each way a certificate can fail has its own
// sentinel error (see errors.go), to be tested with errors.Is.
//
// Certificates signed before JCS used another canonical form: keys sorted
// by their UTF-8 bytes, strings escaped as encoding/json escapes them
// (U+2028 and U+2029 as \u2028 and \u2029), integer literals of any size
// kept as written, -0 as "-0". For all other content the two forms are the
// same bytes. Verify tries that legacy body when the JCS one does not hash
// to the id (dual verification, no migration), so certificates in existing
// state files and those of older fleet nodes keep verifying, and one byte
// changed in their values still fails.
//
// # Checks not made
//
// A check the evaluator could not make (an error bound where only a
// checksum is known, parity on replayed measurements) is listed with
// "not_checked" giving the reason and "passed" false; a check with both
// "not_checked" and "passed": true is malformed. Such a check is neither
// passed nor failed: Passed requires every check that was made to pass, and
// at least one to have been made. Certificates issued before "not_checked"
// existed recorded an uncomputed error bound as passed with formula
// "none: ..."; Check.NotMade reads that as not made too, and they verify as
// they always did. A verifier older than "not_checked" refuses certificates
// that use it as malformed, rather than reading them as passed.
//
// Decoded values inside Config, Inputs and Results are the generic JSON
// values of encoding/json: float64, string, bool, nil, []any and
// map[string]any, except that an integer that float64 cannot hold exactly
// stays a json.Number, so that it encodes back to the same digits.
//
// # Keys
//
// The issuer's key is an Ed25519 private key kept in a PEM "PRIVATE KEY"
// (PKCS #8) file readable by its owner only; LoadOrCreateKey creates it on
// first use. Public keys travel as "ed25519:" followed by the standard
// base64 of their 32 bytes (FormatPublicKey, ParsePublicKey).
//
// The format is version 1 (the "v" field). Changing any of the above is a
// new version.
package certs
