package tflite

import (
	"fmt"

	"github.com/quasim/quasim/memgraph"
)

// Field numbers of the TensorFlow Lite schema (schema.fbs) this reader uses.
const (
	modelOpcodes, modelSubgraphs, modelBuffers       = 1, 2, 4
	codeDeprecated, codeCustom, codeBuiltin          = 0, 1, 3
	subTensors, subInputs, subOutputs, subOperators  = 0, 1, 2, 3
	tensorShape, tensorType, tensorBuffer, tensorNam = 0, 1, 2, 3
	tensorVariable                                   = 5
	opOpcode, opInputs, opOutputs                    = 0, 1, 2
	bufferData, bufferSize                           = 0, 2
)

// elemBits is the size of one element of each TensorType, in bits; 0 for
// types without a fixed size (string, resource, variant).
var elemBits = map[uint8]int64{
	0: 32, 1: 16, 2: 32, 3: 8, 4: 64, 6: 8, 7: 16, 8: 64, 9: 8,
	10: 64, 11: 128, 12: 64, 15: 32, 16: 16, 17: 4,
}

// Read derives the memory graph of data's main subgraph (subgraph 0).
// Constant tensors (those with data in a buffer: the weights) are left
// out; every other tensor an operator reads or writes, or that is a
// subgraph input or output, is a Tensor. A tensor that is neither
// produced nor a subgraph input (a variable, state) is marked input: it
// lives for the whole run. Ops keep the file's execution order.
func Read(data []byte, name string) (*memgraph.Graph, error) {
	f := &buf{b: data}
	g, err := read(f, name)
	if f.err != nil {
		return nil, fmt.Errorf("tflite %s: %w", name, f.err)
	}
	if err != nil {
		return nil, fmt.Errorf("tflite %s: %w", name, err)
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("tflite %s: %w", name, err)
	}
	return g, nil
}

func read(f *buf, name string) (*memgraph.Graph, error) {
	if len(f.b) < 8 || string(f.b[4:8]) != "TFL3" {
		return nil, fmt.Errorf("not a TensorFlow Lite file (no TFL3 identifier)")
	}
	m := f.root()
	subs := m.tables(modelSubgraphs)
	if len(subs) == 0 {
		return nil, fmt.Errorf("no subgraphs")
	}
	sub := subs[0]
	buffers := m.tables(modelBuffers)
	codes := m.tables(modelOpcodes)
	tensors := sub.tables(subTensors)
	ops := sub.tables(subOperators)
	if len(tensors) > memgraph.MaxTensors || len(ops) > memgraph.MaxOps {
		return nil, fmt.Errorf("%d tensors, %d operators: over memgraph's limits", len(tensors), len(ops))
	}
	g := &memgraph.Graph{Name: name, Source: "tflite subgraph 0", Alignment: memgraph.DefaultAlign}
	idx := make([]int, len(tensors)) // tflite tensor → g.Tensors index, -1 if left out
	for i := range idx {
		idx[i] = -2 // not referenced yet
	}
	use := func(t int32) (int, error) {
		if t < 0 {
			return -1, nil // an absent optional input
		}
		if int(t) >= len(tensors) {
			return -1, fmt.Errorf("tensor index %d out of range (%d tensors)", t, len(tensors))
		}
		if idx[t] != -2 {
			return idx[t], nil
		}
		idx[t] = -1
		tt := tensors[t]
		if isConst(tt, buffers) {
			return -1, nil
		}
		bytes, err := tensorBytes(tt)
		if err != nil {
			return -1, fmt.Errorf("tensor %d (%s): %w", t, tt.str(tensorNam), err)
		}
		idx[t] = len(g.Tensors)
		g.Tensors = append(g.Tensors, memgraph.Tensor{ID: fmt.Sprintf("t%d", t), Bytes: bytes})
		return idx[t], nil
	}
	for _, t := range sub.ints(subInputs) {
		k, err := use(t)
		if err != nil {
			return nil, err
		}
		if k >= 0 {
			g.Tensors[k].Input = true
		}
	}
	for n, op := range ops {
		id := fmt.Sprintf("op%d", n)
		kind := opKind(op, codes)
		if name, ok := controlFlow[kind]; ok {
			// Its subgraphs' tensors live in arenas this reader does
			// not plan: a plan of subgraph 0 alone would be too small.
			return nil, fmt.Errorf("operator %d: %s (%s) runs another subgraph: not supported (memgraph plans subgraph 0 only)", n, kind, name)
		}
		g.Ops = append(g.Ops, memgraph.Op{ID: id, Kind: kind})
		for _, t := range op.ints(opInputs) {
			k, err := use(t)
			if err != nil {
				return nil, fmt.Errorf("operator %d: %w", n, err)
			}
			if k >= 0 && (len(g.Tensors[k].Consumers) == 0 || g.Tensors[k].Consumers[len(g.Tensors[k].Consumers)-1] != id) {
				g.Tensors[k].Consumers = append(g.Tensors[k].Consumers, id)
			}
		}
		for _, t := range op.ints(opOutputs) {
			k, err := use(t)
			if err != nil {
				return nil, fmt.Errorf("operator %d: %w", n, err)
			}
			if k < 0 {
				continue
			}
			if g.Tensors[k].Producer != "" || g.Tensors[k].Input {
				return nil, fmt.Errorf("operator %d: tensor %d written twice", n, t)
			}
			g.Tensors[k].Producer = id
		}
	}
	for _, t := range sub.ints(subOutputs) {
		k, err := use(t)
		if err != nil {
			return nil, err
		}
		if k >= 0 {
			g.Tensors[k].Output = true
		}
	}
	for k := range g.Tensors {
		if t := &g.Tensors[k]; t.Producer == "" && !t.Input {
			t.Input = true // state or a variable: live throughout
		}
	}
	return g, nil
}

func isConst(t table, buffers []table) bool {
	b := int(uint32(t.i32(tensorBuffer, 0)))
	if b == 0 || b >= len(buffers) {
		return false
	}
	_, n := buffers[b].vector(bufferData, 1)
	return n > 0 || buffers[b].has(bufferSize)
}

func tensorBytes(t table) (int64, error) {
	bits, ok := elemBits[t.u8(tensorType, 0)]
	if !ok {
		return 0, fmt.Errorf("type %d has no fixed size", t.u8(tensorType, 0))
	}
	n := int64(1)
	for _, d := range t.ints(tensorShape) {
		if d < 0 {
			return 0, fmt.Errorf("dynamic dimension %d in the shape", d)
		}
		if n *= int64(d); n > memgraph.MaxTensorBytes {
			return 0, fmt.Errorf("shape over %d elements", int64(memgraph.MaxTensorBytes))
		}
	}
	return (n*bits + 7) / 8, nil
}

// controlFlow are the builtin operators that run other subgraphs.
var controlFlow = map[string]string{"builtin:118": "IF", "builtin:119": "WHILE", "builtin:129": "CALL_ONCE"}

func opKind(op table, codes []table) string {
	c := int(uint32(op.i32(opOpcode, 0)))
	if c >= len(codes) {
		return fmt.Sprintf("opcode %d", c)
	}
	code := codes[c]
	if s := code.str(codeCustom); s != "" {
		return "custom:" + s
	}
	b := max(int32(code.u8(codeDeprecated, 0)), code.i32(codeBuiltin, 0))
	return fmt.Sprintf("builtin:%d", b)
}
