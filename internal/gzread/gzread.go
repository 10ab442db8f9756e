package gzread

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxRatio bounds how many bytes one gzipped byte may inflate to (DEFLATE
// cannot do better than about 1032:1), so a forged size in a small file
// cannot make ReadFile allocate much.
const maxRatio = 1032

// ReadFile reads path, gunzipping it when its name ends in .gz; more than
// limit bytes (after gunzip) is an error naming the file. It sizes its
// buffer once, from the file's size or the gzip trailer's (the size of
// the last member, mod 2^32), rather than growing it by doubling.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	size := int64(0)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	if strings.HasSuffix(path, ".gz") {
		size = min(gzipSize(f, size), maxRatio*size)
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	var buf bytes.Buffer
	buf.Grow(int(min(size, limit) + bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(r, limit+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(buf.Len()) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return buf.Bytes(), nil
}

// gzipSize reads the uncompressed size in a gzip file's trailer (0 when
// it cannot), without moving f's offset.
func gzipSize(f *os.File, size int64) int64 {
	var b [4]byte
	if size < 18 { // a header and a trailer
		return 0
	}
	if _, err := f.ReadAt(b[:], size-4); err != nil {
		return 0
	}
	return int64(binary.LittleEndian.Uint32(b[:]))
}

// Open opens path for reading as it goes, gunzipping it when its name
// ends in .gz: a reader that fails, naming the file, once more than limit
// bytes (after gunzip) are read, so the caller never holds the whole file.
func Open(path string, limit int64) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	l := &limited{f: f, r: f, path: path, limit: limit, left: limit}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		l.r = zr
	}
	return l, nil
}

type limited struct {
	f           *os.File
	r           io.Reader
	path        string
	limit, left int64
	err         error
}

func (l *limited) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if l.left -= int64(n); l.left < 0 {
		l.err = fmt.Errorf("%s: larger than %d bytes", l.path, l.limit)
		return 0, l.err
	}
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", l.path, err)
	}
	return n, err
}

func (l *limited) Close() error { return l.f.Close() }
