package introspect

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Cache is one level of the data cache hierarchy as CPU 0 sees it.
type Cache struct {
	Name     string `json:"name"`      // "L1", "L2", "L3"
	Level    int    `json:"level"`     // 1, 2, 3
	Bytes    int64  `json:"bytes"`     // the size one instance holds
	SharedBy int    `json:"shared_by"` // logical CPUs that share the instance
}

// ReadCaches reads CPU 0's data and unified caches from sysfs in fsys, the
// root of the file system (os.DirFS("/")), smallest level first.
func ReadCaches(fsys fs.FS) ([]Cache, error) {
	const dir = "sys/devices/system/cpu/cpu0/cache"
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("caches: %w", rooted(err))
	}
	var out []Cache
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "index") {
			continue
		}
		read := func(f string) string {
			b, _ := fs.ReadFile(fsys, path.Join(dir, e.Name(), f))
			return string(b)
		}
		c, ok, err := parseCache(read("level"), read("type"), read("size"), read("shared_cpu_list"))
		if err != nil {
			return nil, fmt.Errorf("caches: %s: %w", path.Join(dir, e.Name()), err)
		}
		if ok && !slices.ContainsFunc(out, func(o Cache) bool { return o.Level == c.Level }) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("caches: sysfs lists no data cache")
	}
	slices.SortFunc(out, func(a, b Cache) int { return a.Level - b.Level })
	return out, nil
}

// rooted gives a path error of fsys (the root of the file system, whose
// paths have no leading slash) the absolute path it names.
func rooted(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && !strings.HasPrefix(pe.Path, "/") {
		return &fs.PathError{Op: pe.Op, Path: "/" + pe.Path, Err: pe.Err}
	}
	return err
}

// probeSizes are the working sets ProbeCaches stands for.
var probeSizes = []int64{32 << 10, 256 << 10, 2 << 20, 16 << 20}

// ProbeCaches are levels to measure a copy bandwidth at where sysfs lists
// no caches (a container, a virtual machine): working sets of 32 KiB to
// 16 MiB, named by their size, not cache sizes. Each holds one thread's
// buffers, so a job is placed against the roof of the smallest probe its
// working set fits, as against a cache level.
func ProbeCaches() []Cache {
	out := make([]Cache, len(probeSizes))
	for i, b := range probeSizes {
		out[i] = Cache{Name: "≤" + sizeText(b), Level: i + 1, Bytes: b, SharedBy: 1}
	}
	return out
}

// sizeText is b in KiB or MiB.
func sizeText(b int64) string {
	if b >= 1<<20 {
		return strconv.FormatInt(b>>20, 10) + " MiB"
	}
	return strconv.FormatInt(b>>10, 10) + " KiB"
}

// parseCache reads one sysfs cache index: its level ("2"), type ("Data",
// "Unified" or "Instruction"), size ("512K") and shared CPU list
// ("0-1,4"). ok is false for an instruction cache.
func parseCache(level, typ, size, shared string) (c Cache, ok bool, err error) {
	typ = strings.TrimSpace(typ)
	if typ == "Instruction" {
		return c, false, nil
	}
	if typ != "Data" && typ != "Unified" {
		return c, false, fmt.Errorf("type %q: want Data, Unified or Instruction", typ)
	}
	if c.Level, err = strconv.Atoi(strings.TrimSpace(level)); err != nil || c.Level < 1 || c.Level > 9 {
		return c, false, fmt.Errorf("level %q: want 1 to 9", strings.TrimSpace(level))
	}
	c.Name = "L" + strconv.Itoa(c.Level)
	if c.Bytes, err = parseSize(strings.TrimSpace(size)); err != nil {
		return c, false, err
	}
	if c.SharedBy, err = countCPUs(strings.TrimSpace(shared)); err != nil {
		return c, false, err
	}
	return c, true, nil
}

// parseSize reads a sysfs size: a number of bytes with an optional K, M
// or G suffix (powers of 1024).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, fmt.Errorf("size %q: want a positive number of bytes, K, M or G", s)
	}
	return n * mult, nil
}

// countCPUs counts the CPUs of a sysfs list such as "0-3,8,10-11".
func countCPUs(s string) (int, error) {
	n := 0
	for _, part := range strings.Split(s, ",") {
		lo, hi, rng := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && rng {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b-a >= 1<<16 {
			return 0, fmt.Errorf("cpu list %q: want ranges such as 0-3,8", s)
		}
		n += b - a + 1
		if n > 1<<16 {
			return 0, fmt.Errorf("cpu list %q: too many CPUs", s)
		}
	}
	return n, nil
}
