// Package sockapi serves quasimd's socket API: the HTTP layer between a
// Unix socket and the daemon's handlers.
//
// It holds the listener (a live daemon on the path is an error, a stale
// file is removed, the file is 0666 and removed at close only while it is
// still this listener's), the connection loop whose fast path answers
// cached GET /v1/configs without net/http and hands every other request's
// connection to net/http, peer-credential authorisation (Writers, and the
// Read, Observe and Write rights of each route), the per-uid rate limit of
// Observe routes, the Host/Origin guard, the Quasim-Version header, 404,
// 405 with Allow and 413 on every route, the mapping of errors to statuses
// and api.Error bodies, request parsing (bodies, paging limits and
// cursors, lookup heads), the /debug/pprof profiles, and the TCP
// listener's /metrics and /ui/.
//
// # Contract
//
// The daemon (package daemon) imports this package, never the other way:
// it passes New a Config holding its route table (each Route's handler
// returns a value to encode or an error built with Invalidf, NotFoundf,
// Permissionf, TooLargef or RetryLater, or wrapping an api sentinel),
// its answer cache (Lookups), and the few handlers that write more than
// JSON. Handlers that charge a request more than its one token, or ask
// whether its peer may write, call Spend and MayWrite. Nothing here reads
// the store, the scheduler or the specs.
//
// This package has no compatibility promise outside quasim.
package sockapi
