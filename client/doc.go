// Package client is the Go client of quasimd's socket API: HTTP/1.1 and JSON
// under /v1/ on a Unix socket, with the wire types of package api.
//
// The zero Client works: it dials the first of Sockets() that answers
// ($QUASIM_SOCKET; else the user's own daemon; else the system service's
// /run/quasim/quasimd.sock). Every method takes a context first and
// returns the decoded api type:
//
//	var c client.Client
//	cfg, err := c.Config(ctx, "sgemm", "1024,1024,1024", "")
//	if errors.Is(err, api.ErrUnavailable) {
//		// quasimd is not running: fall back to defaults
//	}
//
// # Errors
//
// A non-2xx answer becomes an *Error that carries the daemon's message and
// unwraps to the sentinel of its code (api.ErrNotFound, api.ErrInvalidArgument,
// api.ErrConflict, api.ErrPermissionDenied, api.ErrUnavailable or
// api.ErrInternal), so callers test it with errors.Is. A daemon that cannot be
// reached (no socket, connection refused) gives an error wrapping
// api.ErrUnavailable with a hint on how to start it.
//
// The package never logs. It is a stable public API.
package client
