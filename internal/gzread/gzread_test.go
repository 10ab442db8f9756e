package gzread

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
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
	}
}
