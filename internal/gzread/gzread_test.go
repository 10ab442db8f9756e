package gzread

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain := filepath.Join(dir, "a.json")
	if err := os.WriteFile(plain, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte("zipped"))
	zw.Close()
	zipped := filepath.Join(dir, "b.json.gz")
	if err := os.WriteFile(zipped, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "c.gz")
	if err := os.WriteFile(bad, []byte("not gzip, and long enough for a header"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path  string
		limit int64
		want  string
		err   string
	}{
		{plain, 5, "hello", ""},
		{plain, 4, "", "a.json: larger than 4 bytes"},
		{zipped, 6, "zipped", ""},
		{zipped, 5, "", "b.json.gz: larger than 5 bytes"},
		{bad, 100, "", "c.gz: gzip: invalid header"},
		{filepath.Join(dir, "none"), 1, "", "no such file"},
	}
	for _, tt := range tests {
		got, err := ReadFile(tt.path, tt.limit)
		if tt.err == "" && (err != nil || string(got) != tt.want) || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("ReadFile(%s, %d) = %q, %v; want %q, %q", filepath.Base(tt.path), tt.limit, got, err, tt.want, tt.err)
		}
		// Open reads the same as it goes.
		got, err = nil, nil
		r, err := Open(tt.path, tt.limit)
		if err == nil {
			got, err = io.ReadAll(r)
			r.Close()
		}
		if tt.err == "" && (err != nil || string(got) != tt.want) || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("Open(%s, %d) reads %q, %v; want %q, %q", filepath.Base(tt.path), tt.limit, got, err, tt.want, tt.err)
		}
	}
}

// TestReadFileSizesOnce: the buffer is sized from the gzip trailer (or the
// file's size) once, not grown by doubling (io.ReadAll allocated about 2.5
// times a trace's size); a trailer that claims far more than the file can
// inflate to allocates no more than that bound.
func TestReadFileSizesOnce(t *testing.T) {
	dir := t.TempDir()
	payload := bytes.Repeat([]byte(`{"ph":"X","name":"k","ts":1,"dur":2},`), 1<<18) // 9.4 MB
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(payload)
	zw.Close()
	zipped := filepath.Join(dir, "t.json.gz")
	plain := filepath.Join(dir, "t.json")
	forged := filepath.Join(dir, "f.json.gz")
	small := gzipped(t, []byte("tiny"))
	binary.LittleEndian.PutUint32(small[len(small)-4:], 1<<30) // claims 1 GiB
	for path, data := range map[string][]byte{zipped: zb.Bytes(), plain: payload, forged: small} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{zipped, plain} {
		alloc := allocated(func() {
			got, err := ReadFile(path, 1<<30)
			if err != nil || !bytes.Equal(got, payload) {
				t.Fatalf("ReadFile(%s): %d bytes, %v", filepath.Base(path), len(got), err)
			}
		})
		if alloc > uint64(len(payload))*5/4 {
			t.Errorf("ReadFile(%s) allocated %d bytes for %d", filepath.Base(path), alloc, len(payload))
		}
	}
	alloc := allocated(func() {
		if _, err := ReadFile(forged, 1<<30); err == nil {
			t.Error("a forged trailer read without error")
		}
	})
	if alloc > 1<<20 {
		t.Errorf("ReadFile of a %d-byte file with a forged trailer allocated %d bytes", len(small), alloc)
	}
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return zb.Bytes()
}

// allocated returns the bytes fn allocates (the test must not run in
// parallel with others for this to be its own).
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}
