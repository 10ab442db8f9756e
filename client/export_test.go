package client

// Exported for tests of package client_test.
var SocketsFor = sockets

// Pretend sets SystemSocket to system and the caller's uid to uid until the
// test ends.
func Pretend(cleanup func(func()), system string, uid int) {
	oldSys, oldUID := systemSocket, getuid
	systemSocket, getuid = system, func() int { return uid }
	cleanup(func() { systemSocket, getuid = oldSys, oldUID })
}
