package daemon

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

// Two lockers sharing a lock dir, as two processes would, exclude each
// other on one device and not across devices.
func TestDeviceLockAcrossLockers(t *testing.T) {
	dir := t.TempDir()
	a, b := &devices{dir: dir}, &devices{dir: dir}
	class := "cpu/Intel(R) Xeon(R)/avx2/2c"
	unlock, err := a.lock(context.Background(), class)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(LockFile(dir, class)); err != nil {
		t.Fatalf("no lock file: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if _, err := b.lock(ctx, class); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second locker got the held device: %v", err)
	}
	other, err := b.lock(context.Background(), "nvidia/x/sm90/driver-560")
	if err != nil {
		t.Fatalf("another device: %v", err)
	}
	other()
	unlock()
	unlock2, err := b.lock(context.Background(), class)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock2()
}
