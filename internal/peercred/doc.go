// Package peercred reads the credentials (uid, gid, pid) of the process at
// the other end of a Unix socket connection, with SO_PEERCRED on Linux.
//
// This package has no compatibility promise outside quasim.
package peercred
