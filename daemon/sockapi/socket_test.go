package sockapi

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSocketInUse(t *testing.T) {
	dir, _ := os.MkdirTemp("", "qt")
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	ln, err := Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if _, err := Listen(sock); err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Errorf("second listen = %v, want address already in use", err)
	}
	fi, _ := os.Stat(sock)
	if fi.Mode().Perm() != 0o666 {
		t.Errorf("socket mode %v, want 0666", fi.Mode().Perm())
	}
	// A stale socket file is replaced.
	ln.Close()
	os.WriteFile(sock+"x", nil, 0o600) // keep the inode of ln's file from being reused at once
	ln2, err := Listen(sock)
	if err != nil {
		t.Fatalf("listen over a stale socket: %v", err)
	}
	// A daemon that stops after another took the path leaves the other's
	// socket file: closing the first listener again removes nothing.
	ln3, err := Listen(sock + "3")
	if err != nil {
		t.Fatal(err)
	}
	own3, _ := os.Lstat(sock + "3")
	os.Remove(sock + "3")
	if err := os.Rename(sock, sock+"3"); err != nil { // another daemon's file where ln3's was
		t.Fatal(err)
	}
	ln3.Close()
	if _, err := os.Lstat(sock + "3"); err != nil {
		t.Errorf("closing a listener removed another's socket file: %v", err)
	}
	if fi, err := os.Lstat(sock + "3"); err == nil && os.SameFile(fi, own3) {
		t.Error("test setup: the file is ln3's own")
	}
	os.Rename(sock+"3", sock)
	ln2.Close()
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("closing the listener left its own socket file: %v", err)
	}
}
