package certs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf16"
)

// maxDepth bounds the nesting of JSON values read by the package.
const maxDepth = 200

// body is the signed part of a certificate, as encoding/json sees it.
type body struct {
	V        int            `json:"v"`
	Job      Job            `json:"job"`
	Key      string         `json:"key"`
	Config   map[string]any `json:"config"`
	Checks   []Check        `json:"checks"`
	Latency  Latency        `json:"latency"`
	IssuedAt string         `json:"issued_at"`
	Issuer   string         `json:"issuer"`
}

// Body returns the canonical JSON (RFC 8785, JCS) of everything but ID and
// Signature: the bytes that are hashed and signed. A nil Config, Checks or
// Latency.TimesMS encodes as an empty object or list. A value that JSON
// cannot hold (NaN, an infinity, a year outside 0-9999) is ErrMalformed.
func (c *Certificate) Body() ([]byte, error) {
	tree, err := c.bodyTree()
	if err != nil {
		return nil, err
	}
	return writeCanonical(tree)
}

// legacyBody is the body in the canonical form of certificates signed
// before JCS (see the package documentation). It differs from Body only
// where a value is -0, an integer float64 cannot hold, a string with
// U+2028 or U+2029, or keys whose UTF-8 and UTF-16 orders differ.
func (c *Certificate) legacyBody() ([]byte, error) {
	tree, err := c.bodyTree()
	if err != nil {
		return nil, err
	}
	return writeLegacy(tree)
}

// Encode returns the canonical JSON (JCS) of the whole certificate: the
// body's fields plus "id" and "signature". This is the form stored, served
// and verified offline.
func (c *Certificate) Encode() ([]byte, error) {
	tree, err := c.bodyTree()
	if err != nil {
		return nil, err
	}
	tree["id"] = c.ID
	tree["signature"] = c.Signature
	return writeCanonical(tree)
}

// bodyTree returns the body as generic JSON values (map[string]any, []any,
// string, json.Number, bool, nil).
func (c *Certificate) bodyTree() (map[string]any, error) {
	if c == nil {
		return nil, fmt.Errorf("encode certificate: %w: nil certificate", ErrMalformed)
	}
	if err := c.checkFinite(); err != nil {
		return nil, fmt.Errorf("encode certificate: %w: %w", ErrMalformed, err)
	}
	t := c.IssuedAt.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("encode certificate: %w: issued_at year %d is outside 0-9999", ErrMalformed, y)
	}
	b := body{
		V:        c.V,
		Job:      c.Job,
		Key:      c.Key,
		Config:   c.Config,
		Checks:   c.Checks,
		Latency:  c.Latency,
		IssuedAt: t.Format(time.RFC3339Nano),
		Issuer:   c.Issuer,
	}
	if b.Config == nil {
		b.Config = map[string]any{}
	}
	if b.Checks == nil {
		b.Checks = []Check{}
	}
	if b.Latency.TimesMS == nil {
		b.Latency.TimesMS = []float64{}
	}
	data, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encode certificate: %w: %w", ErrMalformed, err)
	}
	v, err := parseJSON(data)
	if err != nil {
		return nil, fmt.Errorf("encode certificate: %w: %w", ErrMalformed, err)
	}
	return v.(map[string]any), nil
}

// checkFinite names the first NaN or infinity among the certificate's
// numbers that encoding/json would reject without saying where.
func (c *Certificate) checkFinite() error {
	l := c.Latency
	for _, f := range []struct {
		name string
		v    float64
	}{{"median_ms", l.MedianMS}, {"p95_ms", l.P95MS}, {"ci95_low_ms", l.CILowMS}, {"ci95_high_ms", l.CIHighMS}} {
		if !finite(f.v) {
			return fmt.Errorf("latency.%s is %v", f.name, f.v)
		}
	}
	for i, t := range l.TimesMS {
		if !finite(t) {
			return fmt.Errorf("latency.times_ms[%d] is %v", i, t)
		}
	}
	if err := checkFiniteMap("config", c.Config); err != nil {
		return err
	}
	for i, ch := range c.Checks {
		if err := checkFiniteMap(fmt.Sprintf("checks[%d].inputs", i), ch.Inputs); err != nil {
			return err
		}
		if err := checkFiniteMap(fmt.Sprintf("checks[%d].results", i), ch.Results); err != nil {
			return err
		}
	}
	return nil
}

func checkFiniteMap(path string, m map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := checkFiniteValue(path+"."+k, m[k], 0); err != nil {
			return err
		}
	}
	return nil
}

// checkFiniteValue covers the value types certificates hold; encoding/json
// catches the rest.
func checkFiniteValue(path string, v any, depth int) error {
	if depth > maxDepth {
		return nil
	}
	switch v := v.(type) {
	case float64:
		if !finite(v) {
			return fmt.Errorf("%s is %v", path, v)
		}
	case float32:
		if !finite(float64(v)) {
			return fmt.Errorf("%s is %v", path, v)
		}
	case []float64:
		for i, f := range v {
			if !finite(f) {
				return fmt.Errorf("%s[%d] is %v", path, i, f)
			}
		}
	case []any:
		for i, e := range v {
			if err := checkFiniteValue(fmt.Sprintf("%s[%d]", path, i), e, depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := checkFiniteValue(path+"."+k, v[k], depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// writeCanonical writes a generic JSON value (map[string]any, []any,
// string, json.Number, float64, bool, nil) in the JSON Canonicalization
// Scheme of RFC 8785: no whitespace, object keys sorted by their UTF-16
// code units, strings with only the escapes JSON requires, numbers as the
// IEEE double they denote written as ECMAScript does.
func writeCanonical(v any) ([]byte, error) {
	var out bytes.Buffer
	if err := jcsValue(&out, v); err != nil {
		return nil, fmt.Errorf("encode certificate: %w: %w", ErrMalformed, err)
	}
	return out.Bytes(), nil
}

func jcsValue(out *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		out.WriteString("null")
	case bool:
		out.WriteString(strconv.FormatBool(v))
	case string:
		jcsString(out, v)
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return numberError(string(v), err)
		}
		return jcsNumber(out, f)
	case float64:
		return jcsNumber(out, v)
	case []any:
		out.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := jcsValue(out, e); err != nil {
				return err
			}
		}
		out.WriteByte(']')
	case map[string]any:
		keys := slices.SortedFunc(maps.Keys(v), func(a, b string) int {
			return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		})
		out.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				out.WriteByte(',')
			}
			jcsString(out, k)
			out.WriteByte(':')
			if err := jcsValue(out, v[k]); err != nil {
				return err
			}
		}
		out.WriteByte('}')
	default:
		return fmt.Errorf("unexpected value of type %T", v)
	}
	return nil
}

// jcsNumber writes f as ECMAScript's Number.prototype.toString does, which
// encoding/json follows for float64 except for negative zero.
func jcsNumber(out *bytes.Buffer, f float64) error {
	if f == 0 {
		out.WriteByte('0')
		return nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	out.Write(b)
	return nil
}

// jcsString writes s quoted with the escapes of RFC 8785 section 3.2.2.2;
// invalid UTF-8 is written as U+FFFD, as the parser reads it.
func jcsString(out *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	out.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		default:
			if r < 0x20 {
				out.WriteString(`\u00`)
				out.WriteByte(hex[r>>4])
				out.WriteByte(hex[r&0xf])
			} else {
				out.WriteRune(r)
			}
		}
	}
	out.WriteByte('"')
}

// legacyWriter writes generic JSON values in the canonical form used
// before JCS: keys sorted by their bytes, strings escaped as encoding/json
// escapes them with HTML escaping off, integer literals kept as written.
type legacyWriter struct {
	out     bytes.Buffer
	scratch bytes.Buffer
	enc     *json.Encoder
}

func writeLegacy(v any) ([]byte, error) {
	w := &legacyWriter{}
	w.enc = json.NewEncoder(&w.scratch)
	w.enc.SetEscapeHTML(false)
	if err := w.value(v); err != nil {
		return nil, fmt.Errorf("encode certificate: %w: %w", ErrMalformed, err)
	}
	return w.out.Bytes(), nil
}

func (w *legacyWriter) value(v any) error {
	switch v := v.(type) {
	case nil:
		w.out.WriteString("null")
	case bool:
		w.out.WriteString(strconv.FormatBool(v))
	case string:
		return w.string(v)
	case json.Number:
		s, err := canonNumber(string(v))
		if err != nil {
			return err
		}
		w.out.WriteString(s)
	case float64:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		w.out.Write(b)
	case []any:
		w.out.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				w.out.WriteByte(',')
			}
			if err := w.value(e); err != nil {
				return err
			}
		}
		w.out.WriteByte(']')
	case map[string]any:
		w.out.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				w.out.WriteByte(',')
			}
			if err := w.string(k); err != nil {
				return err
			}
			w.out.WriteByte(':')
			if err := w.value(v[k]); err != nil {
				return err
			}
		}
		w.out.WriteByte('}')
	default:
		return fmt.Errorf("unexpected value of type %T", v)
	}
	return nil
}

// string writes s escaped as encoding/json escapes it with HTML escaping off.
func (w *legacyWriter) string(s string) error {
	w.scratch.Reset()
	if err := w.enc.Encode(s); err != nil {
		return err
	}
	w.out.Write(bytes.TrimSuffix(w.scratch.Bytes(), []byte{'\n'}))
	return nil
}

// canonNumber returns the canonical form of the JSON number literal lit: an
// integer literal stays as it is (any size); any other literal becomes the
// float64 it denotes, written as encoding/json writes float64s.
func canonNumber(lit string) (string, error) {
	if isIntLiteral(lit) {
		return lit, nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return "", numberError(lit, err)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// numberError says why the literal lit is not a float64.
func numberError(lit string, err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
		return fmt.Errorf("number %s is out of float64 range", clip(lit))
	}
	return fmt.Errorf("bad number %s", clip(lit))
}

// isIntLiteral reports whether lit is -?[0-9]+.
func isIntLiteral(lit string) bool {
	s := lit
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
