package fleet

import "errors"

// Errors of records received from the fleet. Each is returned wrapped with
// detail; test for them with errors.Is.
var (
	// ErrMalformed is returned when a fleet key or record cannot be parsed.
	ErrMalformed = errors.New("malformed fleet record")
	// ErrUntrusted is returned when a record is signed by a key the node does not trust.
	ErrUntrusted = errors.New("signed by an untrusted key")
	// ErrTampered is returned when a record's signature, id or routing key does not match its content.
	ErrTampered = errors.New("record does not match its signature or key")
	// ErrNotPassed is returned when an offered certificate records a failed check, or none made.
	ErrNotPassed = errors.New("certificate did not pass its checks")
)
