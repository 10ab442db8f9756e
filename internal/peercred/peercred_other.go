//go:build !linux

package peercred

import "net"

func get(*net.UnixConn) (Cred, error) { return Cred{}, ErrUnsupported }
