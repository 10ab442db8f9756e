package client

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/quasim/quasim/api"
)

// Error is a non-2xx answer from quasimd. It unwraps to the sentinel of its
// code, so errors.Is(err, api.ErrNotFound) and the like work.
type Error struct {
	Status  int      // HTTP status code
	Code    api.Code // the daemon's error code
	Message string   // the daemon's message
}

// Error returns the daemon's message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel of e.Code.
func (e *Error) Unwrap() error { return e.Code.Sentinel() }

// errorFrom reads the api.Error body of a non-2xx response. A body that is
// not one (a proxy, a daemon too old) is classified by its HTTP status.
func errorFrom(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	var ae api.Error
	if json.Unmarshal(b, &ae) == nil && (ae.Error != "" || ae.Code != "") {
		code := ae.Code
		if code == "" {
			code = codeOfStatus(resp.StatusCode)
		}
		msg := ae.Error
		if msg == "" {
			msg = code.Sentinel().Error()
		}
		return &Error{Status: resp.StatusCode, Code: code, Message: msg}
	}
	msg := resp.Status
	if t := strings.TrimSpace(string(b)); t != "" {
		msg += ": " + t
	}
	return &Error{Status: resp.StatusCode, Code: codeOfStatus(resp.StatusCode), Message: msg}
}

func codeOfStatus(status int) api.Code {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusRequestEntityTooLarge:
		return api.CodeInvalidArgument
	case http.StatusForbidden, http.StatusUnauthorized:
		return api.CodePermissionDenied
	case http.StatusNotFound:
		return api.CodeNotFound
	case http.StatusConflict:
		return api.CodeConflict
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return api.CodeUnavailable
	}
	return api.CodeInternal
}

// unavailableError is a failed dial of the daemon's socket.
type unavailableError struct {
	socket string
	err    *net.OpError
}

func (e *unavailableError) Error() string {
	var why error = e.err
	if e.err.Err != nil {
		why = e.err.Err // the OpError repeats the socket path
	}
	return fmt.Sprintf("cannot reach quasimd at %s: %v; is quasimd running? (systemctl status quasimd, or start it with: go run ./cmd/quasimd)", e.socket, why)
}

func (e *unavailableError) Unwrap() []error { return []error{api.ErrUnavailable, e.err} }
