package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/quasim/quasim/internal/fileown"
)

// devices hands out one exclusive lock per device: a channel for the
// daemon's own cycles and, when dir is set, an flock(2) on dir/<class>.lock
// so other processes that honour it (another quasimd, an operator's
// benchmark script: flock /run/lock/quasim/<class>.lock cmd) do not measure
// on the device at the same time.
type devices struct {
	dir   string
	mu    sync.Mutex
	locks map[string]chan struct{}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// LockFile is the lock file of device class in dir: each character of the
// class other than a letter, digit, '.', '_' or '-' becomes '_'.
func LockFile(dir, class string) string {
	return filepath.Join(dir, unsafeName.ReplaceAllString(class, "_")+".lock")
}

func (d *devices) lock(ctx context.Context, device string) (func(), error) {
	d.mu.Lock()
	if d.locks == nil {
		d.locks = map[string]chan struct{}{}
	}
	ch, ok := d.locks[device]
	if !ok {
		ch = make(chan struct{}, 1)
		d.locks[device] = ch
	}
	d.mu.Unlock()
	select {
	case ch <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if d.dir == "" {
		return func() { <-ch }, nil
	}
	f, err := flock(ctx, LockFile(d.dir, device))
	if err != nil {
		<-ch
		return nil, fmt.Errorf("device lock of %s: %w", device, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
		<-ch
	}, nil
}

// prepare creates the lock directory and an empty lock file for each
// class, so that other users can flock(1) a device's file before the daemon
// first measures on it: under the unit the directory is writable by user
// quasim alone, and flock(1) opens an existing file read-only.
func (d *devices) prepare(classes []string) error {
	if d.dir == "" {
		return nil
	}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return fmt.Errorf("lock dir: %w", err)
	}
	for _, c := range classes {
		path := LockFile(d.dir, c)
		_, statErr := os.Lstat(path)
		f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("lock file of %s: %w", c, fileown.Denied(err, path, ""))
		}
		f.Close()
		if errors.Is(statErr, fs.ErrNotExist) {
			if err := fileown.Owner(path, d.dir); err != nil {
				return err
			}
		}
	}
	return nil
}

// flock opens path and takes an exclusive flock on it, polling until ctx
// is done. The file is opened read-only, as flock(1) opens it: flock needs
// no write access, so a lock file another user left (root's, from a run
// before the service) still locks.
func flock(ctx context.Context, path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
