package sdnotify

import (
	"net"
	"path/filepath"
	"testing"
	"time"
)

func TestSend(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n := New(sock)
	for _, f := range []func() error{n.Ready, n.Watchdog, n.Stopping} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 64)
	for _, want := range []string{"READY=1", "WATCHDOG=1", "STOPPING=1"} {
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		k, err := conn.Read(buf)
		if err != nil || string(buf[:k]) != want {
			t.Errorf("read %q, %v; want %q", buf[:k], err, want)
		}
	}
}

func TestDisabled(t *testing.T) {
	t.Parallel()
	n := New("")
	if n.Enabled() || n.Ready() != nil {
		t.Errorf("a notifier without a socket must be a silent no-op")
	}
	if err := New(filepath.Join(t.TempDir(), "missing")).Ready(); err == nil {
		t.Errorf("Ready to a missing socket = nil error")
	}
}

func TestWatchdogInterval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		usec, pid string
		want      time.Duration
	}{
		{"", "", 0},
		{"10000000", "", 5 * time.Second},
		{"10000000", "42", 5 * time.Second},
		{"10000000", "43", 0},
		{"junk", "", 0},
	}
	for _, tt := range tests {
		if got := WatchdogInterval(tt.usec, tt.pid, 42); got != tt.want {
			t.Errorf("WatchdogInterval(%q, %q) = %v, want %v", tt.usec, tt.pid, got, tt.want)
		}
	}
}
