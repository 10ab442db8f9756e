package peercred

import (
	"errors"
	"net"
)

// Cred is a peer's identity as the kernel reports it.
type Cred struct {
	PID int32
	UID uint32
	GID uint32
}

// ErrUnsupported is returned where the platform or connection offers no peer credentials.
var ErrUnsupported = errors.New("peer credentials unsupported")

// Get returns the credentials of conn's peer. conn must be a *net.UnixConn.
func Get(conn net.Conn) (Cred, error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return Cred{}, ErrUnsupported
	}
	return get(uc)
}
