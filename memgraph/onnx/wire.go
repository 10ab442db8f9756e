package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// msg is one protobuf message's bytes; where names the field path that
// led to it (model.graph.node[3]), for errors.
type msg struct {
	b     []byte
	where string
}

// each calls f for every field of m in order. A malformed field (a bad
// tag, a length past the end) is an error naming m's path.
func (m msg) each(f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	b := m.b
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%s: bad field tag: %v", m.where, protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var u uint32
			u, n = protowire.ConsumeFixed32(b)
			x = uint64(u)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.StartGroupType:
			v, n = protowire.ConsumeGroup(num, b)
		default:
			return fmt.Errorf("%s: field %d: unknown wire type %d", m.where, num, typ)
		}
		if n < 0 {
			return fmt.Errorf("%s: field %d: %v", m.where, num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// want checks that field name (number num) has the wire type the schema
// gives it.
func want(where, name string, typ, w protowire.Type) error {
	if typ != w {
		return fmt.Errorf("%s.%s: wire type %d, want %d", where, name, typ, w)
	}
	return nil
}

// int64s reads a repeated int64 field, packed or not.
func int64s(where string, typ protowire.Type, v []byte, x uint64, out []int64) ([]int64, error) {
	switch typ {
	case protowire.VarintType:
		return append(out, int64(x)), nil
	case protowire.BytesType:
		for len(v) > 0 {
			u, n := protowire.ConsumeVarint(v)
			if n < 0 {
				return out, fmt.Errorf("%s: packed varint: %v", where, protowire.ParseError(n))
			}
			out = append(out, int64(u))
			v = v[n:]
		}
		return out, nil
	}
	return out, fmt.Errorf("%s: wire type %d, want a varint or packed varints", where, typ)
}

// float32s reads a repeated float field, packed or not.
func float32s(where string, typ protowire.Type, v []byte, x uint64, out []float32) ([]float32, error) {
	switch typ {
	case protowire.Fixed32Type:
		return append(out, float32frombits(x)), nil
	case protowire.BytesType:
		if len(v)%4 != 0 {
			return out, fmt.Errorf("%s: packed floats: %d bytes, not a multiple of 4", where, len(v))
		}
		for ; len(v) > 0; v = v[4:] {
			out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(v)))
		}
		return out, nil
	}
	return out, fmt.Errorf("%s: wire type %d, want fixed32 or packed", where, typ)
}

// float64s reads a repeated double field, packed or not.
func float64s(where string, typ protowire.Type, v []byte, x uint64, out []float64) ([]float64, error) {
	switch typ {
	case protowire.Fixed64Type:
		return append(out, math.Float64frombits(x)), nil
	case protowire.BytesType:
		if len(v)%8 != 0 {
			return out, fmt.Errorf("%s: packed doubles: %d bytes, not a multiple of 8", where, len(v))
		}
		for ; len(v) > 0; v = v[8:] {
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(v)))
		}
		return out, nil
	}
	return out, fmt.Errorf("%s: wire type %d, want fixed64 or packed", where, typ)
}

func float32frombits(x uint64) float32 { return math.Float32frombits(uint32(x)) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
