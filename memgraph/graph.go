package memgraph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
)

// Bounds on what Decode accepts. Any local reader may ask for a plan, so a
// graph's size bounds the planner's memory and time.
const (
	MaxBody        = 32 << 20 // bytes of JSON
	MaxOps         = 200_000
	MaxTensors     = 200_000
	MaxTensorBytes = 1 << 40 // one tensor, 1 TiB
	MaxTotalBytes  = 1 << 50 // all tensors together; keeps every sum in int64
	MaxAlignment   = 1 << 20
	DefaultAlign   = 64 // TensorFlow Lite's kDefaultTensorAlignment
)

// Graph is a memory graph in the JSON form documented in doc.go.
type Graph struct {
	Name      string   `json:"name,omitempty"`
	Source    string   `json:"source,omitempty"`
	Order     string   `json:"order,omitempty"` // "fixed" (default) or "free"
	Alignment int64    `json:"alignment,omitempty"`
	Ops       []Op     `json:"ops"`
	Tensors   []Tensor `json:"tensors"`
}

// Op is one operation; in a fixed order, its position in Graph.Ops is
// when it runs.
type Op struct {
	ID   string `json:"id"`
	Kind string `json:"kind,omitempty"`
	// Duration is the op's run time in nanoseconds, for Prefetch; 0 when
	// unknown (see prefetch.go).
	Duration int64 `json:"duration_ns,omitempty"`
	// Access describes how the op walks its tensors, for Misses; an op
	// without it reads and writes each of its tensors once, in sequence
	// (see locality_format.go).
	Access []Access `json:"access,omitempty"`
}

// Tensor is one buffer the plan places. Its lifetime comes either from
// Producer and Consumers (op ids) or from explicit First and Last op
// positions (fixed order only).
type Tensor struct {
	ID        string   `json:"id"`
	Bytes     int64    `json:"bytes"`
	Alignment int64    `json:"alignment,omitempty"`
	Producer  string   `json:"producer,omitempty"`
	Consumers []string `json:"consumers,omitempty"`
	Input     bool     `json:"input,omitempty"`
	Output    bool     `json:"output,omitempty"`
	Host      bool     `json:"host,omitempty"`
	First     *int     `json:"first,omitempty"`
	Last      *int     `json:"last,omitempty"`
}

// ErrInvalid marks every error about a graph's content.
var ErrInvalid = errors.New("invalid memory graph")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Decode reads a graph from JSON and checks it (see Graph.Validate).
// Unknown fields are errors, so a misspelt field is not silently dropped.
func Decode(data []byte) (*Graph, error) {
	if len(data) > MaxBody {
		return nil, invalid("body is %d bytes, over the limit of %d", len(data), MaxBody)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var g Graph
	if err := dec.Decode(&g); err != nil {
		return nil, invalid("json: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalid("json: trailing data after the graph")
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return &g, nil
}

// Validate checks ids, sizes, alignments, references and the op order (no
// cycle, no consumer before its producer in a fixed order).
func (g *Graph) Validate() error {
	_, err := compile(g)
	return err
}

// compiled is a checked graph with ops and tensors as indices.
type compiled struct {
	free      bool
	nops      int
	opID      []string
	size      []int64
	align     []int64
	producer  []int32   // op index, -1 for none
	consumers [][]int32 // op indices
	input     []bool
	output    []bool
	host      []bool
	first     []int32 // explicit positions, -1 when derived
	last      []int32
}

func compile(g *Graph) (*compiled, error) {
	switch g.Order {
	case "", "fixed", "free":
	default:
		return nil, invalid("order %q: want \"fixed\" or \"free\"", g.Order)
	}
	if len(g.Ops) > MaxOps {
		return nil, invalid("%d ops, over the limit of %d", len(g.Ops), MaxOps)
	}
	if len(g.Tensors) > MaxTensors {
		return nil, invalid("%d tensors, over the limit of %d", len(g.Tensors), MaxTensors)
	}
	defAlign := g.Alignment
	if defAlign == 0 {
		defAlign = DefaultAlign
	}
	if err := checkAlign(defAlign); err != nil {
		return nil, invalid("alignment: %v", err)
	}
	c := &compiled{free: g.Order == "free", nops: len(g.Ops)}
	opIdx := make(map[string]int32, len(g.Ops))
	for i, op := range g.Ops {
		if op.ID == "" {
			return nil, invalid("ops[%d]: empty id", i)
		}
		if _, dup := opIdx[op.ID]; dup {
			return nil, invalid("op %q: duplicate id", op.ID)
		}
		opIdx[op.ID] = int32(i)
		c.opID = append(c.opID, op.ID)
	}
	n := len(g.Tensors)
	c.size, c.align = make([]int64, n), make([]int64, n)
	c.producer, c.consumers = make([]int32, n), make([][]int32, n)
	c.input, c.output, c.host = make([]bool, n), make([]bool, n), make([]bool, n)
	c.first, c.last = make([]int32, n), make([]int32, n)
	seen := make(map[string]bool, n)
	var total int64
	for i := range g.Tensors {
		t := &g.Tensors[i]
		if t.ID == "" {
			return nil, invalid("tensors[%d]: empty id", i)
		}
		if seen[t.ID] {
			return nil, invalid("tensor %q: duplicate id", t.ID)
		}
		seen[t.ID] = true
		if t.Bytes < 0 || t.Bytes > MaxTensorBytes {
			return nil, invalid("tensor %q: bytes %d outside [0, %d]", t.ID, t.Bytes, int64(MaxTensorBytes))
		}
		if total += t.Bytes; total > MaxTotalBytes {
			return nil, invalid("tensor %q: total bytes over the limit of %d", t.ID, int64(MaxTotalBytes))
		}
		c.size[i], c.align[i] = t.Bytes, defAlign
		if t.Alignment != 0 {
			if err := checkAlign(t.Alignment); err != nil {
				return nil, invalid("tensor %q: alignment: %v", t.ID, err)
			}
			c.align[i] = t.Alignment
		}
		c.input[i], c.output[i], c.host[i] = t.Input, t.Output, t.Host
		if err := c.lifetimeRefs(g, t, i, opIdx); err != nil {
			return nil, err
		}
	}
	if c.free {
		if _, err := c.topoOrder(); err != nil {
			return nil, err
		}
	} else if err := c.checkFixedOrder(g); err != nil {
		return nil, err
	}
	if err := c.checkOpExtras(g); err != nil {
		return nil, err
	}
	return c, nil
}

func checkAlign(a int64) error {
	if a < 1 || a > MaxAlignment || bits.OnesCount64(uint64(a)) != 1 {
		return fmt.Errorf("%d is not a power of two in [1, %d]", a, MaxAlignment)
	}
	return nil
}

func (c *compiled) lifetimeRefs(g *Graph, t *Tensor, i int, opIdx map[string]int32) error {
	c.producer[i], c.first[i], c.last[i] = -1, -1, -1
	if t.First != nil || t.Last != nil {
		if t.First == nil || t.Last == nil {
			return invalid("tensor %q: first and last go together", t.ID)
		}
		if c.free {
			return invalid("tensor %q: first/last need a fixed op order", t.ID)
		}
		if t.Producer != "" || len(t.Consumers) > 0 {
			return invalid("tensor %q: give first/last or producer/consumers, not both", t.ID)
		}
		f, l := *t.First, *t.Last
		if f < 0 || l < f || l >= len(g.Ops) {
			return invalid("tensor %q: first %d, last %d: want 0 <= first <= last < %d ops", t.ID, f, l, len(g.Ops))
		}
		c.first[i], c.last[i] = int32(f), int32(l)
		return nil
	}
	if t.Producer != "" {
		p, ok := opIdx[t.Producer]
		if !ok {
			return invalid("tensor %q: producer %q is not an op", t.ID, t.Producer)
		}
		if t.Input || t.Host {
			return invalid("tensor %q: a graph input or host tensor has no producer op", t.ID)
		}
		c.producer[i] = p
	} else if !t.Input && !t.Host {
		return invalid("tensor %q: no producer (mark it input or host, or give first/last)", t.ID)
	}
	if len(t.Consumers) > len(g.Ops) {
		return invalid("tensor %q: %d consumers but only %d ops", t.ID, len(t.Consumers), len(g.Ops))
	}
	c.consumers[i] = make([]int32, len(t.Consumers))
	for k, name := range t.Consumers {
		q, ok := opIdx[name]
		if !ok {
			return invalid("tensor %q: consumer %q is not an op", t.ID, name)
		}
		if q == c.producer[i] {
			return invalid("tensor %q: op %q consumes its own output (a cycle)", t.ID, name)
		}
		c.consumers[i][k] = q
	}
	if t.Host && len(t.Consumers) == 0 {
		return invalid("tensor %q: a host tensor needs a consumer", t.ID)
	}
	return nil
}

// checkFixedOrder rejects a consumer that runs before its producer.
func (c *compiled) checkFixedOrder(g *Graph) error {
	for i, p := range c.producer {
		if p < 0 {
			continue
		}
		for _, q := range c.consumers[i] {
			if q < p {
				return invalid("tensor %q: consumer %q (op %d) runs before producer %q (op %d): a cycle or a wrong order",
					g.Tensors[i].ID, g.Ops[q].ID, q, g.Ops[p].ID, p)
			}
		}
	}
	return nil
}
