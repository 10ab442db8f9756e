package onnx

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// A small ONNX writer for tests: each helper returns one message's bytes,
// with the field numbers of onnx.proto that the reader uses.

func field(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func varint(b []byte, num protowire.Number, x uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, x)
}

// dimSpec is a dim_value (int64) or a dim_param (string).
type dimSpec any

func valueInfo(name string, elem int64, dims ...dimSpec) []byte {
	var shape []byte
	for _, d := range dims {
		var db []byte
		switch d := d.(type) {
		case int:
			db = varint(nil, dimValue, uint64(int64(d)))
		case string:
			db = field(nil, dimParam, []byte(d))
		}
		shape = field(shape, shapeDim, db)
	}
	tt := varint(nil, tensorElemType, uint64(elem))
	if dims != nil {
		tt = field(tt, tensorShape, shape)
	}
	v := field(nil, valueName, []byte(name))
	return field(v, valueType, field(nil, typeTensor, tt))
}

func nodeMsg(name, op string, in, out []string) []byte {
	var b []byte
	for _, s := range in {
		b = field(b, nodeInput, []byte(s))
	}
	for _, s := range out {
		b = field(b, nodeOutput, []byte(s))
	}
	b = field(b, nodeName, []byte(name))
	return field(b, nodeOpType, []byte(op))
}

func initializer(name string, dims ...int64) []byte {
	var b []byte
	for _, d := range dims {
		b = varint(b, initDims, uint64(d))
	}
	b = varint(b, initDataType, 1)
	return field(b, initName, []byte(name))
}

// graphMsg assembles a GraphProto from its parts, each tagged with its
// field number.
type part struct {
	num protowire.Number
	b   []byte
}

func modelMsg(parts ...part) []byte {
	var g []byte
	for _, p := range parts {
		g = field(g, p.num, p.b)
	}
	m := varint(nil, 1, 8) // ir_version 8
	return field(m, modelGraph, g)
}

// convNet is a three-node network: x (1x3x8x8 float) -> Conv (weight w)
// -> y (1x4x8x8) -> Relu -> z -> Add(z, y) -> out; a Constant feeds Add's
// unused third input slot only in name (it is a weight).
func convNet() []byte {
	return modelMsg(
		part{graphInput, valueInfo("x", 1, 1, 3, 8, 8)},
		part{graphInput, valueInfo("w", 1, 4, 3, 3, 3)}, // an initializer listed as input
		part{graphInitializer, initializer("w", 4, 3, 3, 3)},
		part{graphNode, nodeMsg("c", "Constant", nil, []string{"k"})},
		part{graphNode, nodeA("conv", "Conv", []string{"x", "w", ""}, []string{"y"}, aInts("pads", 1, 1, 1, 1))},
		part{graphNode, nodeMsg("relu", "Relu", []string{"y"}, []string{"z"})},
		part{graphNode, nodeMsg("add", "Add", []string{"z", "y", "k"}, []string{"out"})},
		part{graphValueInfo, valueInfo("y", 1, 1, 4, 8, 8)},
		part{graphValueInfo, valueInfo("z", 10, 1, 4, 8, 8)}, // float16
		part{graphOutput, valueInfo("out", 1, "batch", 4, 8, 8)},
	)
}

// Attribute writers (AttributeProto): each returns one attribute's bytes.

func aInt(name string, v int64) []byte {
	return varint(field(nil, attrName, []byte(name)), attrI, uint64(v))
}

func aInts(name string, vs ...int64) []byte {
	b := field(nil, attrName, []byte(name))
	for _, v := range vs {
		b = varint(b, attrInts, uint64(v))
	}
	return b
}

func aGraph(name string, g []byte) []byte {
	return field(field(nil, attrName, []byte(name)), attrG, g)
}

func aTensor(name string, t []byte) []byte {
	return field(field(nil, attrName, []byte(name)), attrT, t)
}

// nodeA is nodeMsg with attributes.
func nodeA(name, op string, in, out []string, attrs ...[]byte) []byte {
	b := nodeMsg(name, op, in, out)
	for _, a := range attrs {
		b = field(b, nodeAttr, a)
	}
	return b
}

// int64Tensor is a TensorProto of int64 values with the given dims (nil:
// a vector of the values).
func int64Tensor(name string, dims []int64, vals ...int64) []byte {
	if dims == nil {
		dims = []int64{int64(len(vals))}
	}
	var b []byte
	for _, d := range dims {
		b = varint(b, initDims, uint64(d))
	}
	b = varint(b, initDataType, tInt64)
	for _, v := range vals {
		b = varint(b, initInt64Data, uint64(v))
	}
	return field(b, initName, []byte(name))
}

// graphBody assembles a GraphProto (for a subgraph attribute).
func graphBody(parts ...part) []byte {
	var g []byte
	for _, p := range parts {
		g = field(g, p.num, p.b)
	}
	return g
}

// opsetModel is modelMsg with an opset_import of the default domain.
func opsetModel(opset int64, parts ...part) []byte {
	m := modelMsg(parts...)
	return field(m, modelOpset, varint(nil, opsetVer, uint64(opset)))
}

func protowireFixed32(f float32) []byte {
	return binary.LittleEndian.AppendUint32(nil, math.Float32bits(f))
}

// scalarInfo is a ValueInfoProto of a scalar (a shape with no dims).
func scalarInfo(name string, elem int64) []byte {
	tt := field(varint(nil, tensorElemType, uint64(elem)), tensorShape, nil)
	return field(field(nil, valueName, []byte(name)), valueType, field(nil, typeTensor, tt))
}
