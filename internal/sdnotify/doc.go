// Package sdnotify tells systemd about the daemon's state (READY=1,
// STOPPING=1, WATCHDOG=1) through the datagram socket in $NOTIFY_SOCKET.
// Without that variable every call is a no-op, so the daemon runs the same
// outside systemd.
//
// This package has no compatibility promise outside quasim.
package sdnotify
