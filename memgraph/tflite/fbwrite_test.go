package tflite

import "encoding/binary"

// A small FlatBuffers writer for tests: a table is a list of fields (nil
// for an absent one), each int32, uint8, []int32, []byte, string, tbl or
// []tbl. Children are written after their parent, so every offset points
// forward, as the reader expects.
type tbl []any

type fbw struct{ b []byte }

func (w *fbw) u32(v uint32) int {
	p := len(w.b)
	w.b = binary.LittleEndian.AppendUint32(w.b, v)
	return p
}

func (w *fbw) patch(at, target int) { binary.LittleEndian.PutUint32(w.b[at:], uint32(target-at)) }

func encodeModel(root tbl) []byte {
	w := &fbw{}
	at := w.u32(0)
	w.b = append(w.b, "TFL3"...)
	w.patch(at, w.table(root))
	return w.b
}

func (w *fbw) table(t tbl) int {
	vt := len(w.b)
	w.b = binary.LittleEndian.AppendUint16(w.b, uint16(4+2*len(t)))
	w.b = binary.LittleEndian.AppendUint16(w.b, uint16(4+4*len(t)))
	for i, f := range t {
		o := 0
		if f != nil {
			o = 4 + 4*i
		}
		w.b = binary.LittleEndian.AppendUint16(w.b, uint16(o))
	}
	pos := w.u32(uint32(int32(len(w.b) - vt)))
	slots := make([]int, len(t))
	for i := range t {
		slots[i] = w.u32(0)
	}
	for i, f := range t {
		switch v := f.(type) {
		case int32:
			binary.LittleEndian.PutUint32(w.b[slots[i]:], uint32(v))
		case uint8:
			w.b[slots[i]] = v
		case nil:
		default:
			w.patch(slots[i], w.child(v))
		}
	}
	return pos
}

func (w *fbw) child(v any) int {
	switch v := v.(type) {
	case []int32:
		p := w.u32(uint32(len(v)))
		for _, x := range v {
			w.u32(uint32(x))
		}
		return p
	case []byte:
		p := w.u32(uint32(len(v)))
		w.b = append(w.b, v...)
		return p
	case string:
		return w.child([]byte(v))
	case tbl:
		return w.table(v)
	case []tbl:
		p := w.u32(uint32(len(v)))
		slots := make([]int, len(v))
		for i := range v {
			slots[i] = w.u32(0)
		}
		for i, t := range v {
			w.patch(slots[i], w.table(t))
		}
		return p
	}
	panic("fbw: unknown field type")
}
