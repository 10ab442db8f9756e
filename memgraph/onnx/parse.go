package onnx

import (
	"fmt"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/quasim/quasim/memgraph"
)

// Field numbers of onnx.proto (ONNX IR version 3 and later) this reader
// uses.
const (
	modelGraph, modelOpset = 7, 8
	opsetDomain, opsetVer  = 1, 2

	graphNode, graphInitializer, graphInput, graphOutput = 1, 5, 11, 12
	graphValueInfo, graphSparseInitializer               = 13, 15

	nodeInput, nodeOutput, nodeName, nodeOpType, nodeAttr, nodeDomain = 1, 2, 3, 4, 5, 7

	attrName, attrF, attrI, attrS, attrT, attrG = 1, 2, 3, 4, 5, 6
	attrFloats, attrInts, attrGraphs            = 7, 8, 11

	valueName, valueType = 1, 2
	typeTensor           = 1
	tensorElemType       = 1
	tensorShape          = 2
	shapeDim             = 1
	dimValue, dimParam   = 1, 2

	initDims, initDataType, initFloatData, initInt32Data = 1, 2, 4, 5
	initInt64Data, initName, initRawData, initDoubleData = 7, 8, 9, 10
	initUint64Data, initDataLocation                     = 11, 14
	sparseValues                                         = 1
)

// Limits on nesting and on all nodes of all graphs together: a model is
// input anyone may send to quasimd.
const (
	maxDepth = 16
	maxRank  = 64 // a shape's dims (ONNX has no limit; real models stay under 10)
)

// model is the part of a ModelProto this reader uses.
type model struct {
	opset int64 // of the default domain; 0 when not given
	main  *graph
	nodes int // all nodes of all graphs, for the MaxOps bound
}

// graph is one GraphProto: the main graph or a subgraph.
type graph struct {
	where   string
	nodes   []*node
	inits   map[string]*tensor // initializers
	weights map[string]bool    // initializers, sparse ones too
	inputs  []string
	outputs []string
	values  map[string]value // from input, output and value_info
}

// value is what the model says about one tensor name.
type value struct {
	elem  int64
	dims  []dim
	typed bool // a tensor type was given
}

type dim struct {
	v     int64
	param string
	set   bool // dim_value present
}

type node struct {
	where                string // model.graph.node[3] (Conv "name")
	name, opType, domain string
	inputs, outputs      []string
	attrs                map[string]*attr
}

// attr is one AttributeProto: the kinds this reader uses.
type attr struct {
	f      float32
	i      int64
	s      []byte
	t      *tensor
	g      *graph
	floats []float32
	ints   []int64
	graphs []*graph
}

// tensor is a TensorProto: its type, dims and data, decoded on demand.
type tensor struct {
	where    string
	dims     []int64
	dtype    int64
	raw      []byte
	fdata    []float32
	idata    []int64 // int32_data and int64_data and uint64_data
	ddata    []float64
	external bool
}

func parse(data []byte) (*model, error) {
	var gb []byte
	found := false
	m := &model{}
	err := msg{data, "model"}.each(func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case modelGraph:
			if err := want("model", "graph", typ, protowire.BytesType); err != nil {
				return err
			}
			gb, found = v, true
		case modelOpset:
			if err := want("model", "opset_import", typ, protowire.BytesType); err != nil {
				return err
			}
			var domain string
			var ver int64
			err := msg{v, "model.opset_import"}.each(func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				switch num {
				case opsetDomain:
					if err := want("model.opset_import", "domain", typ, protowire.BytesType); err != nil {
						return err
					}
					domain = string(v)
				case opsetVer:
					if err := want("model.opset_import", "version", typ, protowire.VarintType); err != nil {
						return err
					}
					ver = int64(x)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if domain == "" || domain == "ai.onnx" {
				m.opset = ver
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("model.graph: missing (not an ONNX model?)")
	}
	m.main, err = m.parseGraph(gb, "model.graph", 0)
	return m, err
}

func (m *model) parseGraph(b []byte, where string, depth int) (*graph, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%s: subgraphs nested more than %d deep", where, maxDepth)
	}
	g := &graph{where: where, inits: map[string]*tensor{}, weights: map[string]bool{}, values: map[string]value{}}
	err := msg{b, where}.each(func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		var field string
		switch num {
		case graphNode:
			field = "node[" + strconv.Itoa(len(g.nodes)) + "]"
		case graphInitializer:
			field = "initializer"
		case graphSparseInitializer:
			field = "sparse_initializer"
		case graphInput:
			field = "input[" + strconv.Itoa(len(g.inputs)) + "]"
		case graphOutput:
			field = "output[" + strconv.Itoa(len(g.outputs)) + "]"
		case graphValueInfo:
			field = "value_info"
		default:
			return nil
		}
		if err := want(where, field, typ, protowire.BytesType); err != nil {
			return err
		}
		at := where + "." + field
		switch num {
		case graphNode:
			if m.nodes++; m.nodes > memgraph.MaxOps {
				return fmt.Errorf("%s: over memgraph's limit of %d ops", at, memgraph.MaxOps)
			}
			n, err := m.parseNode(msg{v, at}, depth)
			if err != nil {
				return err
			}
			g.nodes = append(g.nodes, n)
		case graphInitializer:
			t, name, err := parseTensor(msg{v, at})
			if err != nil {
				return err
			}
			g.inits[name], g.weights[name] = t, true
		case graphSparseInitializer:
			return msg{v, at}.each(func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				if num != sparseValues {
					return nil
				}
				if err := want(at, "values", typ, protowire.BytesType); err != nil {
					return err
				}
				name, err := stringField(msg{v, at + ".values"}, initName, "name")
				g.weights[name] = true
				return err
			})
		default:
			name, val, err := parseValue(msg{v, at})
			if err != nil {
				return err
			}
			if name == "" {
				return fmt.Errorf("%s.name: empty", at)
			}
			if len(g.values) >= memgraph.MaxTensors {
				return fmt.Errorf("%s: over memgraph's limit of %d tensors", at, memgraph.MaxTensors)
			}
			if old, ok := g.values[name]; !ok || !old.typed {
				g.values[name] = val
			}
			switch num {
			case graphInput:
				g.inputs = append(g.inputs, name)
			case graphOutput:
				g.outputs = append(g.outputs, name)
			}
		}
		return nil
	})
	if err != nil {
		return g, err
	}
	return g, g.checkSSA()
}

// checkSSA refuses a graph that names a value twice: two nodes with the
// same output, or a node whose output is a graph input or initializer
// (ONNX's checker refuses these too). A reader would otherwise have to
// pick one producer, and a plan made from one pick is wrong for the other.
func (g *graph) checkSSA() error {
	by := map[string]string{}
	for _, in := range g.inputs {
		by[in] = g.where + ".input"
	}
	for name := range g.weights {
		by[name] = g.where + ".initializer"
	}
	for _, n := range g.nodes {
		for _, out := range n.outputs {
			if out == "" {
				continue
			}
			if was, dup := by[out]; dup {
				return fmt.Errorf("%s: output %q: already produced by %s (ONNX graphs are single-assignment)", n.where, out, was)
			}
			by[out] = n.where
		}
	}
	return nil
}

func (m *model) parseNode(mm msg, depth int) (*node, error) {
	n := &node{attrs: map[string]*attr{}}
	err := mm.each(func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		var dst *string
		var field string
		switch num {
		case nodeInput:
			field = "input"
		case nodeOutput:
			field = "output"
		case nodeName:
			field, dst = "name", &n.name
		case nodeOpType:
			field, dst = "op_type", &n.opType
		case nodeDomain:
			field, dst = "domain", &n.domain
		case nodeAttr:
			field = "attribute"
		default:
			return nil
		}
		if err := want(mm.where, field, typ, protowire.BytesType); err != nil {
			return err
		}
		switch num {
		case nodeInput:
			n.inputs = append(n.inputs, string(v))
		case nodeOutput:
			n.outputs = append(n.outputs, string(v))
		case nodeAttr:
			name, a, err := m.parseAttr(msg{v, mm.where + ".attribute[" + strconv.Itoa(len(n.attrs)) + "]"}, depth)
			if err != nil {
				return err
			}
			n.attrs[name] = a
		default:
			*dst = string(v)
		}
		return nil
	})
	if err == nil && n.opType == "" {
		err = fmt.Errorf("%s.op_type: empty", mm.where)
	}
	n.where = fmt.Sprintf("%s (%s %q)", mm.where, n.opType, n.name)
	return n, err
}

func (m *model) parseAttr(mm msg, depth int) (string, *attr, error) {
	a := &attr{}
	var name string
	err := mm.each(func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		var err error
		switch num {
		case attrName:
			err = want(mm.where, "name", typ, protowire.BytesType)
			name = string(v)
		case attrF:
			err = want(mm.where, "f", typ, protowire.Fixed32Type)
			a.f = float32frombits(x)
		case attrI:
			err = want(mm.where, "i", typ, protowire.VarintType)
			a.i = int64(x)
		case attrS:
			err = want(mm.where, "s", typ, protowire.BytesType)
			a.s = v
		case attrT:
			if err = want(mm.where, "t", typ, protowire.BytesType); err == nil {
				a.t, _, err = parseTensor(msg{v, mm.where + ".t"})
			}
		case attrG:
			if err = want(mm.where, "g", typ, protowire.BytesType); err == nil {
				a.g, err = m.parseGraph(v, mm.where+".g", depth+1)
			}
		case attrFloats:
			a.floats, err = float32s(mm.where+".floats", typ, v, x, a.floats)
		case attrInts:
			a.ints, err = int64s(mm.where+".ints", typ, v, x, a.ints)
		case attrGraphs:
			var sg *graph
			if err = want(mm.where, "graphs", typ, protowire.BytesType); err == nil {
				sg, err = m.parseGraph(v, mm.where+".graphs["+strconv.Itoa(len(a.graphs))+"]", depth+1)
				a.graphs = append(a.graphs, sg)
			}
		}
		return err
	})
	if err == nil && name == "" {
		err = fmt.Errorf("%s.name: empty", mm.where)
	}
	return name, a, err
}

// parseTensor reads a TensorProto; its data stays as given until asked
// for (constFromTensor).
func parseTensor(mm msg) (*tensor, string, error) {
	t := &tensor{where: mm.where}
	var name string
	err := mm.each(func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		var err error
		switch num {
		case initName:
			err = want(mm.where, "name", typ, protowire.BytesType)
			name = string(v)
		case initDims:
			t.dims, err = int64s(mm.where+".dims", typ, v, x, t.dims)
			if len(t.dims) > maxRank {
				err = fmt.Errorf("%s.dims: more than %d dims", mm.where, maxRank)
			}
		case initDataType:
			err = want(mm.where, "data_type", typ, protowire.VarintType)
			t.dtype = int64(x)
		case initRawData:
			err = want(mm.where, "raw_data", typ, protowire.BytesType)
			t.raw = v
		case initFloatData:
			t.fdata, err = float32s(mm.where+".float_data", typ, v, x, t.fdata)
		case initInt32Data, initInt64Data, initUint64Data:
			t.idata, err = int64s(mm.where+".int_data", typ, v, x, t.idata)
		case initDoubleData:
			t.ddata, err = float64s(mm.where+".double_data", typ, v, x, t.ddata)
		case initDataLocation:
			err = want(mm.where, "data_location", typ, protowire.VarintType)
			t.external = x == 1
		}
		return err
	})
	return t, name, err
}

// stringField reads the string field num of mm; empty if absent.
func stringField(mm msg, num protowire.Number, field string) (string, error) {
	var s string
	err := mm.each(func(n protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if n != num {
			return nil
		}
		if err := want(mm.where, field, typ, protowire.BytesType); err != nil {
			return err
		}
		s = string(v)
		return nil
	})
	return s, err
}

// parseValue reads a ValueInfoProto: the name, and for a tensor type its
// element type and shape.
func parseValue(mm msg) (string, value, error) {
	var name string
	var val value
	err := mm.each(func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case valueName:
			if err := want(mm.where, "name", typ, protowire.BytesType); err != nil {
				return err
			}
			name = string(v)
		case valueType:
			if err := want(mm.where, "type", typ, protowire.BytesType); err != nil {
				return err
			}
			return msg{v, mm.where + ".type"}.each(func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				if num != typeTensor {
					return nil
				}
				where := mm.where + ".type.tensor_type"
				if err := want(mm.where+".type", "tensor_type", typ, protowire.BytesType); err != nil {
					return err
				}
				val.typed = true
				return parseTensorType(msg{v, where}, &val)
			})
		}
		return nil
	})
	return name, val, err
}

func parseTensorType(mm msg, val *value) error {
	return mm.each(func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case tensorElemType:
			if err := want(mm.where, "elem_type", typ, protowire.VarintType); err != nil {
				return err
			}
			val.elem = int64(x)
		case tensorShape:
			if err := want(mm.where, "shape", typ, protowire.BytesType); err != nil {
				return err
			}
			val.dims = []dim{} // a shape with no dims is a scalar
			return msg{v, mm.where + ".shape"}.each(func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				if num != shapeDim {
					return nil
				}
				where := mm.where + ".shape.dim[" + strconv.Itoa(len(val.dims)) + "]"
				if err := want(mm.where+".shape", "dim", typ, protowire.BytesType); err != nil {
					return err
				}
				if len(val.dims) >= maxRank {
					return fmt.Errorf("%s: more than %d dims", where, maxRank)
				}
				var d dim
				err := msg{v, where}.each(func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
					switch num {
					case dimValue:
						if err := want(where, "dim_value", typ, protowire.VarintType); err != nil {
							return err
						}
						d.v, d.set = int64(x), true
					case dimParam:
						if err := want(where, "dim_param", typ, protowire.BytesType); err != nil {
							return err
						}
						d.param = string(v)
					}
					return nil
				})
				val.dims = append(val.dims, d)
				return err
			})
		}
		return nil
	})
}

// subgraphs lists a node's graph attributes (If's branches, Loop's and
// Scan's body), in attribute-name order so that errors are stable.
func (n *node) subgraphs() []*graph {
	var out []*graph
	for _, k := range sortedKeys(n.attrs) {
		a := n.attrs[k]
		if a.g != nil {
			out = append(out, a.g)
		}
		out = append(out, a.graphs...)
	}
	return out
}
