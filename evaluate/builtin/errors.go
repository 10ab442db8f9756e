package builtin

import "errors"

var (
	// ErrUnknownKernel is returned by New for a name that is not a builtin kernel.
	ErrUnknownKernel = errors.New("unknown builtin kernel")
	// ErrBadInputs is returned by Run when the inputs do not fit the problem.
	ErrBadInputs = errors.New("inputs do not fit the problem")
)
