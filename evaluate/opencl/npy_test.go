package opencl

import (
	"bytes"
	"crypto/sha256"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNPY(t *testing.T) {
	// Written by numpy 1.24: numpy.save(f, numpy.arange(3, dtype=numpy.int32)).
	numpy := []byte("\x93NUMPY\x01\x00v\x00{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }" +
		strings.Repeat(" ", 60) + "\n\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00")
	a, err := ParseNPY(numpy)
	if err != nil || a.Type != "int" || a.Len != 3 || get(a.Bytes, Types["int"], 2) != 2 {
		t.Fatalf("ParseNPY(numpy's) = %+v, %v", a, err)
	}
	b, err := WriteNPY(a)
	if err != nil || !bytes.Equal(b, numpy) {
		t.Errorf("WriteNPY = %q, %v, want numpy's bytes", b, err)
	}
	// HashNPY checks the file from its header and size, and hashes it all.
	path := filepath.Join(t.TempDir(), "a.npy")
	for _, tt := range []struct {
		data []byte
		want string
	}{{numpy, ""}, {numpy[:len(numpy)-1], "the file holds 11"}, {append(slices.Clone(numpy), 0), "the file holds 13"}, {numpy[:8], "no \\x93NUMPY magic"}} {
		if err := os.WriteFile(path, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		typ, n, sum, err := HashNPY(path)
		if tt.want == "" && (err != nil || typ != "int" || n != 3 || sum != sha256.Sum256(tt.data)) {
			t.Errorf("HashNPY(numpy's) = %s %d %x, %v", typ, n, sum, err)
		}
		if tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("HashNPY(%d bytes) = %v, want an error with %q", len(tt.data), err, tt.want)
		}
	}
	bad := []struct{ name, data, want string }{
		{"magic", "PK\x03\x04 zip", "not a .npy file"},
		{"dtype", "\x93NUMPY\x01\x00\x3a\x00{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n....", `dtype ">f4"`},
		{"short", "\x93NUMPY\x01\x00\x3a\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n....", "8 bytes, the file holds 4"},
		{"fortran", "\x93NUMPY\x01\x00\x3c\x00{'descr': '<f4', 'fortran_order': True, 'shape': (1, 1), }\n....", "fortran_order"},
		{"header", "\x93NUMPY\x01\x00\xff\x00{}", "header of 255 bytes"},
	}
	for _, tt := range bad {
		if _, err := ParseNPY([]byte(tt.data)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseNPY(%s) = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func FuzzNPY(f *testing.F) {
	a := Array{Type: "float", Len: 2, Bytes: make([]byte, 8)}
	b, _ := WriteNPY(a)
	f.Add(b)
	f.Add([]byte("\x93NUMPY\x02\x00\x10\x00\x00\x00{'shape': ()}   "))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseNPY(data)
		// HashNPY, reading the file's header and size alone, agrees.
		path := filepath.Join(dir, "a.npy")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		typ, n, sum, herr := HashNPY(path)
		if (herr == nil) != (err == nil) || (err == nil && (typ != a.Type || n != a.Len || sum != sha256.Sum256(data))) {
			t.Fatalf("HashNPY = %s %d %x, %v; ParseNPY = %+v, %v", typ, n, sum, herr, a, err)
		}
		if err != nil {
			return
		}
		if len(a.Bytes) != a.Len*Types[a.Type].Size {
			t.Fatalf("ParseNPY: %d bytes for %d elements of %s", len(a.Bytes), a.Len, a.Type)
		}
		out, err := WriteNPY(a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseNPY(out)
		if err != nil || b.Type != a.Type || b.Len != a.Len || !bytes.Equal(b.Bytes, a.Bytes) {
			t.Fatalf("round trip: %+v, %v", b, err)
		}
	})
}

// Fills: uniform within its range, normal with its mean and deviation.
func TestFills(t *testing.T) {
	const n = 20000
	u := fill(Fill{Kind: FillUniform, Start: -2, Step: 1, Seed: 1}, Types["float"], n)
	g := fill(Fill{Kind: FillNormal, Start: 5, Step: 2, Seed: 1}, Types["double"], n)
	var lo, hi, sum, sq float64 = 1, -1, 0, 0
	for i := range n {
		x := get(u, Types["float"], i)
		lo, hi = min(lo, x), max(hi, x)
		y := get(g, Types["double"], i)
		sum += y
		sq += y * y
	}
	mean := sum / n
	std := math.Sqrt(sq/n - mean*mean)
	if lo < -2 || hi >= 1 || lo > -1.99 || hi < 0.99 {
		t.Errorf("uniform [-2, 1): elements in [%g, %g]", lo, hi)
	}
	if math.Abs(mean-5) > 0.1 || math.Abs(std-2) > 0.1 {
		t.Errorf("normal(5, 2): mean %g, std %g", mean, std)
	}
}
