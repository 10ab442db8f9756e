package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/quasim/quasim/api"
)

// Error is a non-2xx answer from quasimd. It unwraps to the sentinel of its
// code, so errors.Is(err, api.ErrNotFound) and the like work.
type Error struct {
	Status  int      // HTTP status code
	Code    api.Code // the daemon's error code
	Message string   // the daemon's message
	// RetryAfter is the answer's Retry-After (a 429 or 503 may carry
	// one); 0 when it has none.
	RetryAfter time.Duration
}

// Error returns the daemon's message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel of e.Code.
func (e *Error) Unwrap() error { return e.Code.Sentinel() }

// errorFrom reads the api.Error body of a non-2xx response. A body that is
// not one (a proxy, a daemon too old) is classified by its HTTP status.
func errorFrom(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	wait := retryAfter(resp.Header.Get("Retry-After"), time.Now())
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
		return &Error{Status: resp.StatusCode, Code: code, Message: msg, RetryAfter: wait}
	}
	msg := resp.Status
	if t := strings.TrimSpace(string(b)); t != "" {
		msg += ": " + t
	}
	return &Error{Status: resp.StatusCode, Code: codeOfStatus(resp.StatusCode), Message: msg, RetryAfter: wait}
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (RFC 9110 §10.2.3); 0 when it is absent, bad or past.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseUint(v, 10, 31); err == nil {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
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
	case http.StatusTooManyRequests:
		return api.CodeRateLimited
	}
	return api.CodeInternal
}

// unavailableError is a failed dial of every socket the client tried.
type unavailableError struct {
	sockets []string
	errs    []error
}

func (e *unavailableError) Error() string {
	var b strings.Builder
	b.WriteString("cannot reach quasimd at ")
	for i, s := range e.sockets {
		if i > 0 {
			b.WriteString("; nor at ")
		}
		why := e.errs[i]
		var op *net.OpError
		if errors.As(why, &op) && op.Err != nil {
			why = op.Err // the OpError repeats the socket path
		}
		fmt.Fprintf(&b, "%s: %v", s, why)
	}
	b.WriteString("; is quasimd running? (systemctl status quasimd; or start it: quasimd)")
	return b.String()
}

func (e *unavailableError) Unwrap() []error { return append([]error{api.ErrUnavailable}, e.errs...) }
