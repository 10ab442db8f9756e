package certs

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// parseJSON reads exactly one JSON value (RFC 8259) from data into generic
// values: map[string]any, []any, string, json.Number, bool and nil. Strings
// read as encoding/json reads them (invalid UTF-8 and lone surrogates
// become U+FFFD). Unlike encoding/json it rejects duplicate object keys,
// and it bounds nesting to maxDepth.
func parseJSON(data []byte) (any, error) {
	p := &parser{data: data}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.data) {
		return nil, p.errorf("data after the JSON value")
	}
	return v, nil
}

type parser struct {
	data []byte
	i    int
}

var errEOF = errors.New("unexpected end of JSON")

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *parser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// expect consumes byte c, after optional whitespace.
func (p *parser) expect(c byte) error {
	p.space()
	if p.i == len(p.data) {
		return errEOF
	}
	if p.data[p.i] != c {
		return p.errorf("want %q, got %q", c, p.data[p.i])
	}
	p.i++
	return nil
}

func (p *parser) value(depth int) (any, error) {
	if p.i == len(p.data) {
		return nil, errEOF
	}
	switch c := p.data[p.i]; {
	case c == '{':
		if depth >= maxDepth {
			return nil, p.errorf("JSON nested deeper than %d", maxDepth)
		}
		return p.object(depth)
	case c == '[':
		if depth >= maxDepth {
			return nil, p.errorf("JSON nested deeper than %d", maxDepth)
		}
		return p.array(depth)
	case c == '"':
		return p.string()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.errorf("unexpected %q", c)
	}
}

func (p *parser) literal(word string) error {
	if len(p.data)-p.i < len(word) {
		return errEOF
	}
	if string(p.data[p.i:p.i+len(word)]) != word {
		return p.errorf("invalid literal, want %s", word)
	}
	p.i += len(word)
	return nil
}

func (p *parser) object(depth int) (any, error) {
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.space()
		if p.i == len(p.data) {
			return nil, errEOF
		}
		if p.data[p.i] != '"' {
			return nil, p.errorf("want an object key, got %q", p.data[p.i])
		}
		at := p.i
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("offset %d: duplicate key %s", at, clip(k))
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
		p.space()
		if p.i == len(p.data) {
			return nil, errEOF
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, nil
		default:
			return nil, p.errorf("want ',' or '}', got %q", p.data[p.i])
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	p.i++ // [
	l := []any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return l, nil
	}
	for {
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		l = append(l, v)
		p.space()
		if p.i == len(p.data) {
			return nil, errEOF
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return l, nil
		default:
			return nil, p.errorf("want ',' or ']', got %q", p.data[p.i])
		}
	}
}

// string reads a string starting at its opening quote.
func (p *parser) string() (string, error) {
	p.i++ // "
	start := p.i
	// Fast path: no escapes, valid UTF-8.
	for p.i < len(p.data) {
		c := p.data[p.i]
		if c == '"' {
			s := p.data[start:p.i]
			if utf8.Valid(s) {
				p.i++
				return string(s), nil
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.i++
	}
	p.i = start
	var out []byte
	for {
		if p.i == len(p.data) {
			return "", errEOF
		}
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), nil
		case c < 0x20:
			return "", p.errorf("control character %q in string", c)
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			out = utf8.AppendRune(out, r)
		case c < utf8.RuneSelf:
			out = append(out, c)
			p.i++
		default:
			r, size := utf8.DecodeRune(p.data[p.i:])
			p.i += size
			out = utf8.AppendRune(out, r) // RuneError for invalid UTF-8
		}
	}
}

// escape reads one escape sequence (a surrogate pair counts as one).
func (p *parser) escape() (rune, error) {
	if p.i+1 >= len(p.data) {
		return 0, errEOF
	}
	c := p.data[p.i+1]
	p.i += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, err := p.hex4()
		if err != nil {
			return 0, err
		}
		if !utf16.IsSurrogate(r) {
			return r, nil
		}
		// A high surrogate followed by an escaped low one is one rune;
		// anything else is U+FFFD, as encoding/json reads it.
		if p.i+1 < len(p.data) && p.data[p.i] == '\\' && p.data[p.i+1] == 'u' {
			save := p.i
			p.i += 2
			r2, err := p.hex4()
			if err != nil {
				return 0, err
			}
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				return dec, nil
			}
			p.i = save
		}
		return utf8.RuneError, nil
	}
	p.i -= 1
	return 0, p.errorf("invalid escape \\%c", c)
}

func (p *parser) hex4() (rune, error) {
	if len(p.data)-p.i < 4 {
		return 0, errEOF
	}
	n, err := strconv.ParseUint(string(p.data[p.i:p.i+4]), 16, 32)
	if err != nil || p.data[p.i] == '+' || p.data[p.i] == '-' {
		return 0, p.errorf("invalid \\u escape")
	}
	p.i += 4
	return rune(n), nil
}

// number reads a number literal, checking the JSON grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number() (any, error) {
	start := p.i
	if p.data[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i == len(p.data):
		return nil, errEOF
	case p.data[p.i] == '0':
		p.i++
	case p.data[p.i] >= '1' && p.data[p.i] <= '9':
		p.digits()
	default:
		return nil, p.errorf("invalid number")
	}
	if p.i < len(p.data) && p.data[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return nil, p.errorf("invalid number: no digits after '.'")
		}
	}
	if p.i < len(p.data) && (p.data[p.i] == 'e' || p.data[p.i] == 'E') {
		p.i++
		if p.i < len(p.data) && (p.data[p.i] == '+' || p.data[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return nil, p.errorf("invalid number: no digits in the exponent")
		}
	}
	return json.Number(p.data[start:p.i]), nil
}

func (p *parser) digits() int {
	n := 0
	for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}
