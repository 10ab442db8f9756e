package opencl

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// npyTypes maps numpy's little-endian dtype strings to argument types.
var npyTypes = map[string]string{
	"<f4": "float", "<f8": "double", "|i1": "char", "|u1": "uchar", "<i2": "short", "<u2": "ushort",
	"<i4": "int", "<u4": "uint", "<i8": "long", "<u8": "ulong",
}

// Array is the content of a .npy file: its elements' type (a key of
// Types), element count and raw little-endian bytes in C order.
type Array struct {
	Type  string
	Len   int
	Bytes []byte
}

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// ReadNPY reads a .npy file (numpy.save's format, versions 1 to 3).
func ReadNPY(path string) (Array, error) { return loadNPY(path, os.ReadFile) }

// loadNPY decodes the .npy file at path, its bytes got by read.
func loadNPY(path string, read func(string) ([]byte, error)) (Array, error) {
	data, err := read(path)
	if err != nil {
		return Array{}, err
	}
	a, err := ParseNPY(data)
	if err != nil {
		return Array{}, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// ParseNPY decodes a .npy file's bytes.
func ParseNPY(data []byte) (Array, error) {
	typ, n, off, err := parseNPYHeader(data, int64(len(data)))
	if err != nil {
		return Array{}, err
	}
	return Array{Type: typ, Len: n, Bytes: data[off:]}, nil
}

// HeadNPY checks a .npy file as ReadNPY does, from its header and its
// size, and returns its type and element count.
func HeadNPY(path string) (typ string, n int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	typ, n, _, err = headNPY(f)
	return typ, n, err
}

// headNPY reads and checks f's header, leaving f after what it read.
func headNPY(f *os.File) (typ string, n int, head []byte, err error) {
	st, err := f.Stat()
	if err != nil {
		return "", 0, nil, err
	}
	head = make([]byte, min(st.Size(), 12+1<<20))
	if _, err := io.ReadFull(f, head); err != nil {
		return "", 0, nil, err
	}
	typ, n, _, err = parseNPYHeader(head, st.Size())
	return typ, n, head, err
}

// HashNPY checks a .npy file as HeadNPY does and returns its type,
// element count and the SHA-256 of the whole file, streamed: a spec's
// arguments of hundreds of MB are hashed without being held in memory.
func HashNPY(path string) (typ string, n int, sum [sha256.Size]byte, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, sum, err
	}
	defer f.Close()
	typ, n, head, err := headNPY(f)
	if err != nil {
		return "", 0, sum, err
	}
	h := sha256.New()
	h.Write(head)
	if _, err := io.Copy(h, f); err != nil {
		return "", 0, sum, err
	}
	h.Sum(sum[:0])
	return typ, n, sum, nil
}

// parseNPYHeader decodes the header at the start of data, a .npy file of
// size bytes (data may be only its start), and checks that size holds
// the shape's elements: the type, the element count and the body's
// offset.
func parseNPYHeader(data []byte, size int64) (typ string, n, off int, err error) {
	if len(data) < 10 || string(data[:6]) != "\x93NUMPY" {
		return "", 0, 0, errors.New("not a .npy file (no \\x93NUMPY magic)")
	}
	var hlen int
	switch data[6] {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(data[8:10])), 10
	case 2, 3:
		if len(data) < 12 {
			return "", 0, 0, errors.New("truncated header")
		}
		hlen, off = int(binary.LittleEndian.Uint32(data[8:12])), 12
	default:
		return "", 0, 0, fmt.Errorf(".npy version %d: want 1, 2 or 3", data[6])
	}
	if hlen < 0 || off+hlen > len(data) || hlen > 1<<20 {
		return "", 0, 0, fmt.Errorf("header of %d bytes in a file of %d", hlen, size)
	}
	h := string(data[off : off+hlen])
	m := npyDescr.FindStringSubmatch(h)
	if m == nil {
		return "", 0, 0, fmt.Errorf("header %q has no descr", strings.TrimSpace(h))
	}
	typ, ok := npyTypes[m[1]]
	if !ok {
		return "", 0, 0, fmt.Errorf("dtype %q: unsupported (want little-endian float32, float64 or an integer type)", m[1])
	}
	f := npyFortran.FindStringSubmatch(h)
	s := npyShape.FindStringSubmatch(h)
	if f == nil || s == nil {
		return "", 0, 0, fmt.Errorf("header %q lacks fortran_order or shape", strings.TrimSpace(h))
	}
	n = 1
	var ndim int
	for _, d := range strings.Split(s[1], ",") {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		x, err := strconv.Atoi(d)
		if err != nil || x < 0 {
			return "", 0, 0, fmt.Errorf("shape (%s): %q is not a size", s[1], d)
		}
		if x > 0 && n > (1<<40)/x {
			return "", 0, 0, fmt.Errorf("shape (%s) is too large", s[1])
		}
		n *= x
		ndim++
	}
	if f[1] == "True" && ndim > 1 {
		return "", 0, 0, errors.New("fortran_order arrays are not taken (save numpy.ascontiguousarray(a))")
	}
	off += hlen
	if body := size - int64(off); body != int64(n)*int64(Types[typ].Size) {
		return "", 0, 0, fmt.Errorf("shape (%s) of %s is %d bytes, the file holds %d", s[1], m[1], n*Types[typ].Size, body)
	}
	return typ, n, off, nil
}

// WriteNPY encodes a 1-dim array as a version 1 .npy file.
func WriteNPY(a Array) ([]byte, error) {
	t, ok := Types[a.Type]
	var descr string
	for d, name := range npyTypes {
		if ok && Types[name] == t {
			descr = d
		}
	}
	if descr == "" {
		return nil, fmt.Errorf("type %q has no .npy dtype", a.Type)
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }", descr, a.Len)
	pad := 64 - (10+len(h)+1)%64
	h += strings.Repeat(" ", pad%64) + "\n"
	out := make([]byte, 10, 10+len(h)+len(a.Bytes))
	copy(out, "\x93NUMPY\x01\x00")
	binary.LittleEndian.PutUint16(out[8:], uint16(len(h)))
	out = append(out, h...)
	return append(out, a.Bytes...), nil
}
