// Package certs defines quasim's certificates: signed statements that a
// config of a job passed verification, with the inputs and results of each
// check and the measured latency distribution.
//
// # Format
//
// A certificate is one JSON object. Its body is every field except "id" and
// "signature", written in canonical form:
//
//   - object keys sorted by their bytes, at every depth (the maps of Config,
//     Job.Details, Check.Inputs and Check.Results included);
//   - no whitespace outside strings;
//   - strings escaped as encoding/json escapes them with HTML escaping off;
//   - numbers in Go's shortest round-trip form: integer-typed values and
//     integral floats below 1e21 without exponent or fraction ("64", not
//     "64.0" or "6.4e1"), other floats as encoding/json writes them ("0.1",
//     "1e-07", "1e+21"); NaN and infinities are an error;
//   - issued_at in RFC 3339 with nanoseconds, in UTC ("2025-01-02T03:04:05.5Z").
//
// The "id" is the lowercase hex SHA-256 of the body and the "signature" the
// standard base64 (padded) Ed25519 signature of the body by the issuer's key;
// "issuer" names that key by KeyID. The stored and served form, from Encode,
// is the canonical JSON of the whole object, "id" and "signature" included,
// with no trailing newline. Two certificates with equal content encode to
// the same bytes whatever the order their maps were filled in.
//
// # Verification
//
// VerifyBytes verifies a certificate offline from its bytes and the
// issuer's public key: it decodes strictly, recomputes the body, checks the
// id, the issuer and the signature, and requires the bytes to be the
// canonical encoding up to insignificant whitespace. Re-indenting a
// certificate (jq, an editor, a trailing newline) keeps it valid, since
// JSON whitespace outside strings carries no content. Every token must stay
// as written, though: a number, an escape or a time written another way can
// parse to the same Go value and to a different one in another reader
// ("1.00000000000000001" is 1 to encoding/json, not to a decimal parser),
// so a certificate that verifies means the same to every reader. Each way
// a certificate can fail has its own sentinel error (see errors.go), to be
// tested with errors.Is.
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
