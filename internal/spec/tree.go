package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A spec file is first read into a tree of nodes that YAML and JSON share,
// with line numbers, key order and duplicate-key checks, then decoded field by
// field (fields.go). Both formats thus give the same Spec and the same errors.

type nodeKind uint8

const (
	nScalar nodeKind = iota + 1
	nList
	nMap
)

func (k nodeKind) String() string {
	switch k {
	case nScalar:
		return "a scalar"
	case nList:
		return "a list"
	case nMap:
		return "a mapping"
	}
	return "nothing"
}

// node is one value of a spec file.
type node struct {
	kind  nodeKind
	line  int    // 1-based; 0 when unknown
	val   any    // scalar: nil, int64, float64, bool or string
	text  string // scalar as written (YAML) or its JSON text, for string fields
	items []*node
	keys  []string // map keys in file order
	vals  []*node  // map values, parallel to keys
}

// get returns the value of a map key, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != nMap {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// isNull reports whether n is absent or an explicit null.
func (n *node) isNull() bool { return n == nil || (n.kind == nScalar && n.val == nil) }

const (
	// maxNodes bounds the nodes a file may expand to, which stops YAML
	// alias bombs.
	maxNodes = 100_000
	// maxDepth bounds nesting; spec files are shallow.
	maxDepth = 64
)

// tooManyValues is the error of a file that expands to more than maxNodes
// values: a limit on the spec's size, which YAML aliases may reach from a
// small file (an alias bomb).
func tooManyValues(size int, aliases bool) error {
	how := "a spec holds at most %d values; this file has %d bytes"
	if aliases {
		how = "a spec holds at most %d values; this file of %d bytes reaches that through its YAML aliases"
	}
	return fmt.Errorf("too large: "+how, maxNodes, size)
}

// yamlTree reads a single YAML document.
func yamlTree(data []byte) (*node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file")
		}
		return nil, yamlErr(err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, fmt.Errorf("line %d: a second YAML document; a spec file holds one", extra.Line)
	case !errors.Is(err, io.EOF):
		return nil, yamlErr(err)
	}
	root := &doc
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) != 1 {
			return nil, errors.New("empty file")
		}
		root = doc.Content[0]
	}
	b := yamlBuilder{budget: maxNodes, size: len(data)}
	return b.build(root, 0)
}

// yamlErr drops the package prefix: "yaml: line 3: ..." reads "line 3: ...".
func yamlErr(err error) error {
	return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
}

type yamlBuilder struct {
	budget, size int
	aliases      bool // an alias was expanded
}

func (b *yamlBuilder) build(y *yaml.Node, depth int) (*node, error) {
	b.budget--
	if b.budget < 0 {
		return nil, tooManyValues(b.size, b.aliases)
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("line %d: nested deeper than %d levels", y.Line, maxDepth)
	}
	switch y.Kind {
	case yaml.AliasNode:
		if y.Alias == nil {
			return nil, fmt.Errorf("line %d: unknown alias", y.Line)
		}
		b.aliases = true
		n, err := b.build(y.Alias, depth+1)
		if err != nil {
			return nil, err
		}
		c := *n
		c.line = y.Line
		return &c, nil
	case yaml.ScalarNode:
		v, err := yamlScalar(y)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", y.Line, err)
		}
		return &node{kind: nScalar, line: y.Line, val: v, text: y.Value}, nil
	case yaml.SequenceNode:
		n := &node{kind: nList, line: y.Line}
		for _, c := range y.Content {
			item, err := b.build(c, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, item)
		}
		return n, nil
	case yaml.MappingNode:
		n := &node{kind: nMap, line: y.Line}
		seen := make(map[string]int, len(y.Content)/2)
		for i := 0; i+1 < len(y.Content); i += 2 {
			k := y.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a mapping key must be a scalar", k.Line)
			}
			if k.ShortTag() == "!!merge" {
				return nil, fmt.Errorf("line %d: merge keys (<<) are not supported", k.Line)
			}
			if first, dup := seen[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q already defined at line %d", k.Line, k.Value, first)
			}
			seen[k.Value] = k.Line
			v, err := b.build(y.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, k.Value)
			n.vals = append(n.vals, v)
		}
		return n, nil
	case yaml.DocumentNode:
		return nil, fmt.Errorf("line %d: nested document", y.Line)
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", y.Line)
}

// yamlScalar resolves a scalar by its tag: !!int, !!float, !!bool and !!null
// become Go values, anything else (strings, timestamps) stays text.
func yamlScalar(y *yaml.Node) (any, error) {
	switch y.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := y.Decode(&b); err != nil {
			return nil, yamlErr(err)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := y.Decode(&i); err != nil {
			return nil, fmt.Errorf("integer %s out of range", y.Value)
		}
		return i, nil
	case "!!float":
		var f float64
		if err := y.Decode(&f); err != nil {
			return nil, fmt.Errorf("number %s: %v", y.Value, yamlErr(err))
		}
		return f, nil
	}
	return y.Value, nil
}

// jsonTree reads one JSON value.
func jsonTree(data []byte) (*node, error) {
	b := &jsonBuilder{data: data, dec: json.NewDecoder(bytes.NewReader(data)), budget: maxNodes}
	b.dec.UseNumber()
	for i, c := range data {
		if c == '\n' {
			b.lineStarts = append(b.lineStarts, i+1)
		}
	}
	tok, err := b.token()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("empty file")
	}
	if err != nil {
		return nil, b.syntaxErr(err)
	}
	n, err := b.value(tok, 0)
	if err != nil {
		return nil, b.syntaxErr(err)
	}
	if _, err := b.token(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("data after the top-level value")
		}
		return nil, b.syntaxErr(err)
	}
	return n, nil
}

type jsonBuilder struct {
	data       []byte
	dec        *json.Decoder
	lineStarts []int // offsets just after each '\n'
	budget     int
	line       int // line of the last token read
}

// token reads the next token and records the line it starts on.
func (b *jsonBuilder) token() (json.Token, error) {
	off := int(b.dec.InputOffset())
	for off < len(b.data) && strings.IndexByte(" \t\r\n,:", b.data[off]) >= 0 {
		off++
	}
	b.line = b.lineOf(off)
	return b.dec.Token()
}

func (b *jsonBuilder) lineOf(off int) int {
	return sort.SearchInts(b.lineStarts, off+1) + 1
}

func (b *jsonBuilder) value(tok json.Token, depth int) (*node, error) {
	b.budget--
	if b.budget < 0 {
		return nil, tooManyValues(len(b.data), false)
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("line %d: nested deeper than %d levels", b.line, maxDepth)
	}
	line := b.line
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			n := &node{kind: nList, line: line}
			for b.dec.More() {
				tok, err := b.token()
				if err != nil {
					return nil, err
				}
				item, err := b.value(tok, depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, item)
			}
			_, err := b.token() // ']'
			return n, err
		case '{':
			n := &node{kind: nMap, line: line}
			seen := make(map[string]int)
			for b.dec.More() {
				tok, err := b.token()
				if err != nil {
					return nil, err
				}
				key, ok := tok.(string)
				if !ok {
					return nil, fmt.Errorf("line %d: object key is not a string", b.line)
				}
				if first, dup := seen[key]; dup {
					return nil, fmt.Errorf("line %d: key %q already defined at line %d", b.line, key, first)
				}
				seen[key] = b.line
				if tok, err = b.token(); err != nil {
					return nil, err
				}
				v, err := b.value(tok, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key)
				n.vals = append(n.vals, v)
			}
			_, err := b.token() // '}'
			return n, err
		}
		return nil, fmt.Errorf("line %d: unexpected %q", line, rune(t))
	case json.Number:
		v, err := jsonNumber(t)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		return &node{kind: nScalar, line: line, val: v, text: string(t)}, nil
	case string:
		return &node{kind: nScalar, line: line, val: t, text: t}, nil
	case bool:
		return &node{kind: nScalar, line: line, val: t, text: strconv.FormatBool(t)}, nil
	case nil:
		return &node{kind: nScalar, line: line, text: "null"}, nil
	}
	return nil, fmt.Errorf("line %d: unexpected token %v", line, tok)
}

// jsonNumber reads an integer as int64 and anything with a fraction or an
// exponent as float64, as Python reads JSON.
func jsonNumber(n json.Number) (any, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("integer %s out of range", s)
		}
		return i, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, fmt.Errorf("number %s out of range", s)
	}
	return f, nil
}

// syntaxErr adds the line and column to a JSON syntax error.
func (b *jsonBuilder) syntaxErr(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset is at or just past the offending byte, depending on the
		// error: take the byte the message names.
		off := int(se.Offset)
		if off >= len(b.data) || (off > 0 && !strings.Contains(se.Error(), quoteChar(b.data[off]))) {
			off--
		}
		off = max(off, 0)
		line := b.lineOf(off)
		col := off + 1
		if line > 1 {
			col = off - b.lineStarts[line-2] + 1
		}
		return fmt.Errorf("line %d, column %d: %v", line, col, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("unexpected end of JSON input")
	}
	return err
}

// quoteChar quotes c as encoding/json's error messages do.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}
