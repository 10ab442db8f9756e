package causal

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalidSpan is wrapped by every SpanError.
	ErrInvalidSpan = errors.New("invalid span")
	// ErrCycle is returned when dependencies and program order form a cycle.
	ErrCycle = errors.New("dependency cycle")
	// ErrInvalidTrace is returned when a Chrome trace cannot be read at all.
	ErrInvalidTrace = errors.New("invalid chrome trace")
)

// SpanError names the span (its index in the batch) and the field that is
// wrong.
type SpanError struct {
	Index int
	Field string
	Err   error
}

func (e *SpanError) Error() string {
	return fmt.Sprintf("span %d: %s: %v", e.Index, e.Field, e.Err)
}

func (e *SpanError) Unwrap() []error { return []error{ErrInvalidSpan, e.Err} }

func spanErr(i int, field, format string, args ...any) error {
	return &SpanError{Index: i, Field: field, Err: fmt.Errorf(format, args...)}
}
