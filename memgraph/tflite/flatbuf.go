package tflite

import (
	"encoding/binary"
	"fmt"
)

// buf is a bounds-checked view of a FlatBuffer: every read checks its
// range, so a corrupt or hostile file gives an error, not a panic.
type buf struct {
	b   []byte
	err error
}

func (f *buf) fail(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf(format, args...)
	}
}

func (f *buf) ok(pos, n int) bool {
	if f.err != nil {
		return false
	}
	if pos < 0 || n < 0 || pos > len(f.b)-n {
		f.fail("offset %d (+%d bytes) outside the file of %d bytes", pos, n, len(f.b))
		return false
	}
	return true
}

func (f *buf) u16(pos int) int {
	if !f.ok(pos, 2) {
		return 0
	}
	return int(binary.LittleEndian.Uint16(f.b[pos:]))
}

func (f *buf) u32(pos int) uint32 {
	if !f.ok(pos, 4) {
		return 0
	}
	return binary.LittleEndian.Uint32(f.b[pos:])
}

func (f *buf) i32(pos int) int32 { return int32(f.u32(pos)) }

// deref follows a uoffset stored at pos.
func (f *buf) deref(pos int) int {
	u := f.u32(pos)
	if f.err != nil {
		return 0
	}
	if int64(pos)+int64(u) > int64(len(f.b)) {
		f.fail("offset at %d points past the end", pos)
		return 0
	}
	return pos + int(u)
}

// table is a FlatBuffers table at pos.
type table struct {
	f   *buf
	pos int
}

func (f *buf) root() table { return table{f, f.deref(0)} }

// field returns the absolute position of field i, or 0 when absent.
func (t table) field(i int) int {
	if t.f.err != nil {
		return 0
	}
	vt := int64(t.pos) - int64(t.f.i32(t.pos))
	if vt < 0 || vt > int64(len(t.f.b)) {
		t.f.fail("table at %d: vtable outside the file", t.pos)
		return 0
	}
	vlen := t.f.u16(int(vt))
	slot := 4 + 2*i
	if slot+2 > vlen {
		return 0
	}
	o := t.f.u16(int(vt) + slot)
	if o == 0 {
		return 0
	}
	return t.pos + o
}

func (t table) i32(i int, def int32) int32 {
	if p := t.field(i); p != 0 {
		return t.f.i32(p)
	}
	return def
}

func (t table) u8(i int, def uint8) uint8 {
	if p := t.field(i); p != 0 && t.f.ok(p, 1) {
		return t.f.b[p]
	}
	return def
}

func (t table) bool(i int) bool { return t.u8(i, 0) != 0 }

// vector returns the element start and length of vector field i.
func (t table) vector(i int, elem int) (int, int) {
	p := t.field(i)
	if p == 0 {
		return 0, 0
	}
	v := t.f.deref(p)
	n := int(t.f.u32(v))
	if !t.f.ok(v+4, n*elem) || n < 0 {
		return 0, 0
	}
	return v + 4, n
}

func (t table) ints(i int) []int32 {
	start, n := t.vector(i, 4)
	out := make([]int32, n)
	for k := range out {
		out[k] = t.f.i32(start + 4*k)
	}
	return out
}

func (t table) tables(i int) []table {
	start, n := t.vector(i, 4)
	out := make([]table, n)
	for k := range out {
		out[k] = table{t.f, t.f.deref(start + 4*k)}
	}
	return out
}

func (t table) str(i int) string {
	start, n := t.vector(i, 1)
	if n == 0 {
		return ""
	}
	return string(t.f.b[start : start+n])
}

func (t table) has(i int) bool { return t.field(i) != 0 }
