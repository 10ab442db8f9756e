package onnx

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/quasim/quasim/memgraph"
)

// Field numbers of onnx.proto (ONNX IR version 3 and later) this reader
// uses.
const (
	modelGraph = 7

	graphNode, graphInitializer, graphInput, graphOutput = 1, 5, 11, 12
	graphValueInfo, graphSparseInitializer               = 13, 15

	nodeInput, nodeOutput, nodeName, nodeOpType, nodeDomain = 1, 2, 3, 4, 7

	valueName, valueType = 1, 2
	typeTensor           = 1
	tensorElemType       = 1
	tensorShape          = 2
	shapeDim             = 1
	dimValue, dimParam   = 1, 2

	initDims, initDataType, initName = 1, 2, 8
	sparseValues                     = 1
)

// elemBits is the size of one element of each TensorProto.DataType, in
// bits; absent for types without a fixed size (undefined, string).
var elemBits = map[int64]int64{
	1: 32, 2: 8, 3: 8, 4: 16, 5: 16, 6: 32, 7: 64, 9: 8, 10: 16, 11: 64,
	12: 32, 13: 64, 14: 64, 15: 128, 16: 16, 17: 8, 18: 8, 19: 8, 20: 8,
	21: 4, 22: 4, 23: 4,
}

// Options resolve what a model leaves open.
type Options struct {
	// Dims gives values to symbolic dimensions (dim_param), by name:
	// {"batch": 1}. A symbolic dimension with no value here, and a
	// dimension with neither a value nor a name, is an error naming the
	// tensor, unless Unknown is set.
	Dims map[string]int64
	// Unknown, when positive, is the value of every dimension that is
	// still unknown (-1, unnamed, or a name Dims lacks).
	Unknown int64
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

// model is the part of a ModelProto this reader uses.
type model struct {
	nodes   []node
	weights map[string]bool // initializers and sparse initializers
	inputs  []string
	outputs []string
	values  map[string]value // from input, output and value_info
}

type node struct {
	name, opType, domain string
	inputs, outputs      []string
}

// Read derives the memory graph of an ONNX model (a serialized
// ModelProto) with the given name. Initializers (the weights) are left
// out; every other tensor a node reads or writes, and every graph input
// and output, is a Tensor sized from its shape and element type, which
// must come from the graph's input, output or value_info (run ONNX shape
// inference first on a model that lacks them). Nodes keep the file's
// order, which ONNX requires to be topological.
func Read(data []byte, name string, opt Options) (*memgraph.Graph, error) {
	m, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("onnx %s: %w", name, err)
	}
	g, err := m.graph(name, opt)
	if err != nil {
		return nil, fmt.Errorf("onnx %s: %w", name, err)
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("onnx %s: %w", name, err)
	}
	return g, nil
}

func parse(data []byte) (*model, error) {
	var gb []byte
	found := false
	err := msg{data, "model"}.each(func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num == modelGraph {
			if err := want("model", "graph", typ, protowire.BytesType); err != nil {
				return err
			}
			gb, found = v, true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("model.graph: missing (not an ONNX model?)")
	}
	m := &model{weights: map[string]bool{}, values: map[string]value{}}
	return m, m.parseGraph(gb)
}

func (m *model) parseGraph(b []byte) error {
	return msg{b, "model.graph"}.each(func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		var field string
		switch num {
		case graphNode:
			field = "node[" + strconv.Itoa(len(m.nodes)) + "]"
		case graphInitializer:
			field = "initializer"
		case graphSparseInitializer:
			field = "sparse_initializer"
		case graphInput:
			field = "input[" + strconv.Itoa(len(m.inputs)) + "]"
		case graphOutput:
			field = "output[" + strconv.Itoa(len(m.outputs)) + "]"
		case graphValueInfo:
			field = "value_info"
		default:
			return nil
		}
		if err := want("model.graph", field, typ, protowire.BytesType); err != nil {
			return err
		}
		where := "model.graph." + field
		switch num {
		case graphNode:
			if len(m.nodes) >= memgraph.MaxOps {
				return fmt.Errorf("model.graph.node: over memgraph's limit of %d ops", memgraph.MaxOps)
			}
			n, err := parseNode(msg{v, where})
			if err != nil {
				return err
			}
			m.nodes = append(m.nodes, n)
		case graphInitializer:
			name, err := stringField(msg{v, where}, initName, "name")
			if err != nil {
				return err
			}
			m.weights[name] = true
		case graphSparseInitializer:
			return msg{v, where}.each(func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				if num != sparseValues {
					return nil
				}
				if err := want(where, "values", typ, protowire.BytesType); err != nil {
					return err
				}
				name, err := stringField(msg{v, where + ".values"}, initName, "name")
				m.weights[name] = true
				return err
			})
		default:
			name, val, err := parseValue(msg{v, where})
			if err != nil {
				return err
			}
			if name == "" {
				return fmt.Errorf("%s.name: empty", where)
			}
			if len(m.values) >= memgraph.MaxTensors {
				return fmt.Errorf("%s: over memgraph's limit of %d tensors", where, memgraph.MaxTensors)
			}
			if old, ok := m.values[name]; !ok || !old.typed {
				m.values[name] = val
			}
			switch num {
			case graphInput:
				m.inputs = append(m.inputs, name)
			case graphOutput:
				m.outputs = append(m.outputs, name)
			}
		}
		return nil
	})
}

func parseNode(mm msg) (node, error) {
	var n node
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
		default:
			*dst = string(v)
		}
		return nil
	})
	if err == nil && n.opType == "" {
		err = fmt.Errorf("%s.op_type: empty", mm.where)
	}
	return n, err
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

// maxRank bounds a shape's dims (ONNX has no limit; real models stay
// under 10).
const maxRank = 64

// graph turns the model into a memory graph.
func (m *model) graph(name string, opt Options) (*memgraph.Graph, error) {
	g := &memgraph.Graph{Name: name, Source: "onnx graph", Alignment: memgraph.DefaultAlign}
	idx := map[string]int{} // tensor name → g.Tensors index
	add := func(tname string, t memgraph.Tensor) (int, error) {
		if len(g.Tensors) >= memgraph.MaxTensors {
			return 0, fmt.Errorf("over memgraph's limit of %d tensors", memgraph.MaxTensors)
		}
		b, err := m.bytes(tname, opt)
		if err != nil {
			return 0, err
		}
		t.ID, t.Bytes = tname, b
		g.Tensors = append(g.Tensors, t)
		idx[tname] = len(g.Tensors) - 1
		return len(g.Tensors) - 1, nil
	}
	for _, in := range m.inputs {
		if m.weights[in] {
			continue // an initializer listed as an input (IR < 4): a weight
		}
		if _, dup := idx[in]; dup {
			return nil, fmt.Errorf("model.graph.input %q: listed twice", in)
		}
		if _, err := add(in, memgraph.Tensor{Input: true}); err != nil {
			return nil, err
		}
	}
	opIDs := map[string]bool{}
	for i, n := range m.nodes {
		id := n.name
		if id == "" || opIDs[id] {
			id = "node" + strconv.Itoa(i)
			for k := 1; opIDs[id]; k++ {
				id = "node" + strconv.Itoa(i) + "_" + strconv.Itoa(k)
			}
		}
		if n.opType == "Constant" && n.domain == "" {
			// A constant is a weight the runtime folds into an
			// initializer: no op, and its output is not planned.
			for _, out := range n.outputs {
				m.weights[out] = true
			}
			continue
		}
		opIDs[id] = true
		kind := n.opType
		if n.domain != "" && n.domain != "ai.onnx" {
			kind = n.domain + ":" + n.opType
		}
		g.Ops = append(g.Ops, memgraph.Op{ID: id, Kind: kind})
		where := fmt.Sprintf("model.graph.node[%d] (%s %q)", i, n.opType, n.name)
		for _, in := range n.inputs {
			if in == "" || m.weights[in] {
				continue // an absent optional input, or a weight
			}
			k, ok := idx[in]
			if !ok {
				return nil, fmt.Errorf("%s: input %q: no producer (not a graph input, an initializer or an earlier node's output)", where, in)
			}
			if c := g.Tensors[k].Consumers; len(c) == 0 || c[len(c)-1] != id {
				g.Tensors[k].Consumers = append(c, id)
			}
		}
		for _, out := range n.outputs {
			if out == "" {
				continue // an absent optional output
			}
			if _, dup := idx[out]; dup || m.weights[out] {
				return nil, fmt.Errorf("%s: output %q: already produced (ONNX graphs are single-assignment)", where, out)
			}
			if _, err := add(out, memgraph.Tensor{Producer: id}); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	for _, out := range m.outputs {
		if k, ok := idx[out]; ok {
			g.Tensors[k].Output = true
		} else if !m.weights[out] {
			return nil, fmt.Errorf("model.graph.output %q: no node produces it and it is not a graph input", out)
		}
	}
	return g, nil
}

// bytes is the size of tensor tname: its shape's product times its
// element size, rounded up to whole bytes.
func (m *model) bytes(tname string, opt Options) (int64, error) {
	v, ok := m.values[tname]
	switch {
	case !ok || !v.typed:
		return 0, fmt.Errorf("tensor %q: no type in the graph's input, output or value_info (run ONNX shape inference on the model first)", tname)
	case v.dims == nil:
		return 0, fmt.Errorf("tensor %q: no shape in the graph's input, output or value_info (run ONNX shape inference on the model first)", tname)
	}
	eb, ok := elemBits[v.elem]
	if !ok {
		return 0, fmt.Errorf("tensor %q: elem_type %d has no fixed size (want a numeric TensorProto.DataType)", tname, v.elem)
	}
	n := uint64(1)
	for k, d := range v.dims {
		x := d.v
		if !d.set || x < 0 {
			var given bool
			if d.param != "" {
				x, given = opt.Dims[d.param]
			}
			if !given && opt.Unknown > 0 {
				x, given = opt.Unknown, true
			}
			if !given {
				if d.param != "" {
					return 0, fmt.Errorf("tensor %q: dim %d is symbolic (%q): give it a value", tname, k, d.param)
				}
				return 0, fmt.Errorf("tensor %q: dim %d is unknown: give a value for unknown dims", tname, k)
			}
			if x < 0 {
				return 0, fmt.Errorf("tensor %q: dim %d (%q) given as %d, want >= 0", tname, k, d.param, x)
			}
		}
		hi, lo := bits.Mul64(n, uint64(x))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, fmt.Errorf("tensor %q: shape overflows", tname)
		}
		n = lo
	}
	hi, lo := bits.Mul64(n, uint64(eb))
	if hi != 0 || lo > uint64(memgraph.MaxTensorBytes)*8 {
		return 0, fmt.Errorf("tensor %q: %d elements of %d bits, over memgraph's limit of %d bytes per tensor", tname, n, eb, int64(memgraph.MaxTensorBytes))
	}
	return int64((lo + 7) / 8), nil
}

// ParseDim reads NAME=VALUE, a symbolic dimension's value as a flag or a
// query parameter gives it.
func ParseDim(s string) (string, int64, error) {
	name, val, ok := strings.Cut(s, "=")
	v, err := strconv.ParseInt(val, 10, 64)
	if !ok || name == "" || err != nil || v < 0 {
		return "", 0, fmt.Errorf("dim %q: want NAME=VALUE, a non-negative integer", s)
	}
	return name, v, nil
}
