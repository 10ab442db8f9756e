// Package api holds the wire types of quasimd's socket API: routes, request
// and response bodies, headers and error codes. It is shared by the daemon,
// the Go client and quasimctl, and is a stable public API.
//
// All routes live under /v1/ and speak JSON over HTTP/1.1 on a Unix socket.
// Every non-2xx response carries an Error body.
package api
