package sockapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/store"
)

// StatusOf is the one place that maps errors to HTTP statuses and codes.
func StatusOf(err error) (int, api.Code) {
	var tl *tooLargeError
	switch {
	case errors.As(err, &tl):
		return http.StatusRequestEntityTooLarge, api.CodeInvalidArgument
	case errors.Is(err, api.ErrInvalidArgument), errors.Is(err, store.ErrInvalid):
		return http.StatusBadRequest, api.CodeInvalidArgument
	case errors.Is(err, api.ErrNotFound), errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound, api.CodeNotFound
	case errors.Is(err, api.ErrConflict):
		return http.StatusConflict, api.CodeConflict
	case errors.Is(err, api.ErrPermissionDenied):
		return http.StatusForbidden, api.CodePermissionDenied
	case errors.Is(err, api.ErrUnavailable):
		return http.StatusServiceUnavailable, api.CodeUnavailable
	case errors.Is(err, api.ErrRateLimited):
		return http.StatusTooManyRequests, api.CodeRateLimited
	}
	return http.StatusInternalServerError, api.CodeInternal
}

// WriteError answers err as an api.Error with StatusOf's status.
func WriteError(w http.ResponseWriter, err error) {
	status, code := StatusOf(err)
	setRetryAfter(w, err)
	WriteJSON(w, status, api.Error{Error: err.Error(), Code: code})
}

// WriteJSON answers v, indented, with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	enc.Encode(v) // the client went away if this fails: nothing to tell it
}

// Invalidf is an api.ErrInvalidArgument saying what is wrong: 400.
func Invalidf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", api.ErrInvalidArgument, fmt.Sprintf(format, a...))
}

// NotFoundf is an api.ErrNotFound: 404.
func NotFoundf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", api.ErrNotFound, fmt.Sprintf(format, a...))
}

// Permissionf is an api.ErrPermissionDenied: 403.
func Permissionf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", api.ErrPermissionDenied, fmt.Sprintf(format, a...))
}

// tooLargeError is a request body over its route's bound: HTTP 413, an
// invalid argument on the wire.
type tooLargeError struct{ msg string }

func (e *tooLargeError) Error() string { return api.ErrInvalidArgument.Error() + ": " + e.msg }
func (e *tooLargeError) Unwrap() error { return api.ErrInvalidArgument }

// TooLargef is a request body over its route's bound: 413.
func TooLargef(format string, a ...any) error {
	return &tooLargeError{msg: fmt.Sprintf(format, a...)}
}
