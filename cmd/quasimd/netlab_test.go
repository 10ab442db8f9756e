//go:build linux

package main

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// The partition test's relay on loopback (no namespace, no root): bytes
// arrive whole and in order, each crossing held for the delay, and a
// chunk drawn as lost held for the stall more.
func TestRelayShapes(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	r := newRelay(t, 1)
	addr, err := r.listen("", "127.0.0.1:0", echo.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		shape    shaping
		min, max time.Duration // of one round trip (two crossings); max is loose: a loaded machine
	}{
		{"none", shaping{}, 0, time.Second},
		{"delay", shaping{delay: 100 * time.Millisecond}, 200 * time.Millisecond, 1200 * time.Millisecond},
		{"all lost", shaping{delay: 50 * time.Millisecond, loss: 1, stall: 100 * time.Millisecond}, 300 * time.Millisecond, 1300 * time.Millisecond},
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := bytes.Repeat([]byte("0123456789abcdef"), 1000)
	for _, tt := range tests {
		r.set(tt.shape)
		start := time.Now()
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatal(err)
		}
		d := time.Since(start)
		if !bytes.Equal(got, msg) {
			t.Fatalf("%s: the relay changed or reordered the bytes", tt.name)
		}
		if d < tt.min || d > tt.max {
			t.Errorf("%s: round trip %s, want %s to %s", tt.name, d, tt.min, tt.max)
		}
	}
	opened, failed, chunks, stalled := r.counts()
	if opened != 1 || failed != 0 || chunks == 0 || stalled == 0 {
		t.Errorf("counts: %d connections, %d failed, %d chunks, %d stalled", opened, failed, chunks, stalled)
	}
}
