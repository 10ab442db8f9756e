package spec

import (
	"errors"
	"strconv"
	"strings"
)

var (
	// ErrInvalid is matched (errors.Is) by every error about what a spec file
	// says, as opposed to an error reading it.
	ErrInvalid = errors.New("invalid kernel spec")
	// ErrDuplicate is wrapped by LoadDir's error for a spec whose name an
	// earlier file of the directory already took.
	ErrDuplicate = errors.New("duplicate kernel name")
	// ErrDuplicatePipeline is wrapped by Load's error for a pipeline whose
	// name an earlier file of the directory already declared.
	ErrDuplicatePipeline = errors.New("duplicate pipeline name")
)

// FieldError is an error in one field of one spec file. Its message reads
// `FILE: FIELD: what is wrong`, or `FILE: FIELD "value": what is wrong`,
// with " (line N)" when the line is known.
type FieldError struct {
	File  string // the spec file as given to Parse, or "builtin"
	Field string // e.g. "schedule", "constraints[1]", "parameters.tile_m"; empty for the whole file
	Line  int    // 1-based line in the file, 0 when unknown
	Err   error
}

func (e *FieldError) Error() string {
	msg := e.Err.Error()
	s := e.File + ": "
	if e.Field != "" {
		// A message that starts with the quoted value reads on from the
		// field: `schedule "every day": expected ...`.
		sep := ": "
		if strings.HasPrefix(msg, `"`) {
			sep = " "
		}
		s += e.Field + sep
	}
	s += msg
	if e.Line > 0 {
		s += " (line " + strconv.Itoa(e.Line) + ")"
	}
	return s
}

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }

// Is makes every FieldError match ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// IsFieldError reports whether err is or wraps a *FieldError; errors.As
// gets at its fields.
func IsFieldError(err error) bool {
	var fe *FieldError
	return errors.As(err, &fe)
}
