package peercred

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestGetSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("skipping: SO_PEERCRED is Linux only")
	}
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan Cred, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(done)
			return
		}
		defer c.Close()
		cred, err := Get(c)
		if err != nil {
			t.Error(err)
		}
		done <- cred
	}()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cred := <-done
	if int(cred.UID) != os.Getuid() || int(cred.GID) != os.Getgid() || int(cred.PID) != os.Getpid() {
		t.Errorf("Get = %+v, want uid %d gid %d pid %d", cred, os.Getuid(), os.Getgid(), os.Getpid())
	}
	if _, err := Get(&net.TCPConn{}); err != ErrUnsupported {
		t.Errorf("Get(tcp) = %v, want ErrUnsupported", err)
	}
}
