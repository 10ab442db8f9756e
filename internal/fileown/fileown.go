package fileown

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Owner gives path the owner and group of ref when the process runs as
// root.
func Owner(path, ref string) error {
	return like(path, ref, false)
}

// OwnerMode gives path the owner, group and permission bits of ref when
// the process runs as root, and ref's permission bits otherwise.
func OwnerMode(path, ref string) error {
	return like(path, ref, true)
}

func like(path, ref string, mode bool) error {
	fi, err := os.Stat(ref)
	if err != nil {
		return fmt.Errorf("owner of %s: %w", path, err)
	}
	if mode {
		if err := os.Chmod(path, fi.Mode().Perm()); err != nil {
			return fmt.Errorf("mode of %s: %w", path, err)
		}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || os.Geteuid() != 0 {
		return nil
	}
	if err := os.Lchown(path, int(st.Uid), int(st.Gid)); err != nil {
		return fmt.Errorf("owner of %s: %w", path, err)
	}
	return nil
}

// Tree gives every file and folder under dir that belongs to root the
// owner and group of dir, when the process runs as root and dir is not
// root's: what a run as root made there (the OpenCL kernel cache, the GPU
// settings journal, files of an earlier run) stays openable by dir's user.
func Tree(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("owner of %s: %w", dir, err)
	}
	own, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || own.Uid == 0 {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return nil // gone meanwhile
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid == 0 {
			if err := os.Lchown(path, int(own.Uid), int(own.Gid)); err != nil {
				return fmt.Errorf("owner of %s: %w", path, err)
			}
		}
		return nil
	})
}

// DeniedError is a permission error on a path, with what cures it.
type DeniedError struct {
	Path  string // the path the process may not open
	Owner string // "user:group" of Path (of its directory when it does not exist)
	Mode  fs.FileMode
	As    string // "user:group" of the process
	Chown string // the command that gives Path to the process's user
	Err   error
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("%v: %s is %s %04o and quasimd runs as %s; run: %s", e.Err, e.Path, e.Owner, e.Mode.Perm(), e.As, e.Chown)
}

func (e *DeniedError) Unwrap() error { return e.Err }

// Denied returns err as a *DeniedError when it is a permission error
// (fs.ErrPermission) on path, and err itself otherwise. The chown it
// suggests is of cure, recursive when cure is a directory (the state
// directory, whose files all need it); an empty cure is path.
func Denied(err error, path, cure string) error {
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	fi, serr := os.Stat(path)
	if serr != nil {
		path = filepath.Dir(path)
		if fi, serr = os.Stat(path); serr != nil {
			return err
		}
	}
	e := &DeniedError{Path: path, Mode: fi.Mode(), As: names(os.Geteuid(), os.Getegid()), Err: err}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.Owner = names(int(st.Uid), int(st.Gid))
	}
	if cure == "" {
		cure = path
	}
	r := ""
	if ci, err := os.Stat(cure); err == nil && ci.IsDir() {
		r = "-R "
	}
	e.Chown = fmt.Sprintf("chown %s%s %s", r, e.As, cure)
	return e
}

// names is "user:group", by name where the system knows them.
func names(uid, gid int) string {
	u, g := strconv.Itoa(uid), strconv.Itoa(gid)
	if pw, err := user.LookupId(u); err == nil {
		u = pw.Username
	}
	if gr, err := user.LookupGroupId(g); err == nil {
		g = gr.Name
	}
	return u + ":" + g
}
