package opencl

import (
	"encoding/binary"
	"errors"
	"fmt"
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
func ReadNPY(path string) (Array, error) {
	data, err := os.ReadFile(path)
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
	if len(data) < 10 || string(data[:6]) != "\x93NUMPY" {
		return Array{}, errors.New("not a .npy file (no \\x93NUMPY magic)")
	}
	var hlen, off int
	switch data[6] {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(data[8:10])), 10
	case 2, 3:
		if len(data) < 12 {
			return Array{}, errors.New("truncated header")
		}
		hlen, off = int(binary.LittleEndian.Uint32(data[8:12])), 12
	default:
		return Array{}, fmt.Errorf(".npy version %d: want 1, 2 or 3", data[6])
	}
	if hlen < 0 || off+hlen > len(data) || hlen > 1<<20 {
		return Array{}, fmt.Errorf("header of %d bytes in a file of %d", hlen, len(data))
	}
	h := string(data[off : off+hlen])
	m := npyDescr.FindStringSubmatch(h)
	if m == nil {
		return Array{}, fmt.Errorf("header %q has no descr", strings.TrimSpace(h))
	}
	typ, ok := npyTypes[m[1]]
	if !ok {
		return Array{}, fmt.Errorf("dtype %q: unsupported (want little-endian float32, float64 or an integer type)", m[1])
	}
	f := npyFortran.FindStringSubmatch(h)
	s := npyShape.FindStringSubmatch(h)
	if f == nil || s == nil {
		return Array{}, fmt.Errorf("header %q lacks fortran_order or shape", strings.TrimSpace(h))
	}
	n := 1
	var ndim int
	for _, d := range strings.Split(s[1], ",") {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		x, err := strconv.Atoi(d)
		if err != nil || x < 0 {
			return Array{}, fmt.Errorf("shape (%s): %q is not a size", s[1], d)
		}
		if x > 0 && n > (1<<40)/x {
			return Array{}, fmt.Errorf("shape (%s) is too large", s[1])
		}
		n *= x
		ndim++
	}
	if f[1] == "True" && ndim > 1 {
		return Array{}, errors.New("fortran_order arrays are not taken (save numpy.ascontiguousarray(a))")
	}
	body := data[off+hlen:]
	size := Types[typ].Size
	if len(body) != n*size {
		return Array{}, fmt.Errorf("shape (%s) of %s is %d bytes, the file holds %d", s[1], m[1], n*size, len(body))
	}
	return Array{Type: typ, Len: n, Bytes: body}, nil
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
