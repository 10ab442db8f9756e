package certs

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Decode parses a certificate strictly: data must hold exactly one JSON
// object with the fields of a certificate, each of its type, the required
// ones present, no unknown field (keys match exactly, case included), no
// duplicate key, and v must be Version. Any failure is ErrMalformed. Decode
// does not verify; see Verify and VerifyBytes.
func Decode(data []byte) (*Certificate, error) {
	tree, err := parseJSON(data)
	if err != nil {
		return nil, fmt.Errorf("decode certificate: %w: %w", ErrMalformed, err)
	}
	return decodeTree(tree)
}

// decodeTree is Decode from parsed JSON; it converts tree's numbers.
func decodeTree(tree any) (*Certificate, error) {
	d := &decoder{}
	c := d.certificate(tree)
	if d.err != nil {
		return nil, fmt.Errorf("decode certificate: %w: %w", ErrMalformed, d.err)
	}
	return c, nil
}

// decoder turns generic JSON values into a Certificate, keeping the first
// error.
type decoder struct {
	err error
}

func (d *decoder) failf(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) certificate(v any) *Certificate {
	o := d.object(v, "certificate")
	c := &Certificate{}
	c.V = o.integer("v")
	if d.err == nil && c.V != Version {
		d.failf("unsupported version %d, want %d", c.V, Version)
	}
	jv, _ := o.field("job", true)
	c.Job = d.job(jv)
	c.Key = o.str("key", true)
	c.Config = o.values("config", true)
	if c.Config == nil {
		c.Config = map[string]any{}
	}
	cv, _ := o.field("checks", true)
	c.Checks = d.checks(cv)
	lv, _ := o.field("latency", true)
	c.Latency = d.latency(lv)
	if s := o.str("issued_at", true); d.err == nil {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			d.failf("issued_at: %w", err)
		}
		c.IssuedAt = t.UTC()
	}
	c.Issuer = o.str("issuer", true)
	c.ID = o.str("id", true)
	c.Signature = o.str("signature", true)
	o.end()
	return c
}

func (d *decoder) job(v any) Job {
	o := d.object(v, "job")
	j := Job{
		Kernel:   o.str("kernel", true),
		SpecHash: o.str("spec_hash", true),
		Problem:  o.str("problem", true),
		Device:   o.str("device", true),
	}
	if dv, ok := o.field("details", false); ok {
		do := d.object(dv, "job.details")
		j.Details = make(map[string]string, len(do.m))
		for k := range do.m {
			j.Details[k] = do.str(k, true)
		}
	}
	o.end()
	return j
}

func (d *decoder) checks(v any) []Check {
	l, ok := v.([]any)
	if !ok {
		if d.err == nil {
			d.failf("checks: want a list, got %s", kind(v))
		}
		return nil
	}
	out := make([]Check, 0, len(l))
	for i, e := range l {
		o := d.object(e, fmt.Sprintf("checks[%d]", i))
		ch := Check{
			Name:       o.str("name", true),
			Passed:     o.boolean("passed"),
			NotChecked: o.str("not_checked", false),
			Inputs:     o.values("inputs", false),
			Results:    o.values("results", false),
			Note:       o.str("note", false),
		}
		if d.err == nil && ch.NotChecked != "" && ch.Passed {
			d.failf("checks[%d]: passed and not_checked: a check not made cannot have passed", i)
		}
		out = append(out, ch)
		o.end()
	}
	return out
}

func (d *decoder) latency(v any) Latency {
	o := d.object(v, "latency")
	l := Latency{
		Samples:  o.integer("samples"),
		MedianMS: o.float("median_ms"),
		P95MS:    o.float("p95_ms"),
		CILowMS:  o.float("ci95_low_ms"),
		CIHighMS: o.float("ci95_high_ms"),
	}
	if tv, ok := o.field("times_ms", true); ok {
		tl, ok := tv.([]any)
		if !ok {
			d.failf("latency.times_ms: want a list, got %s", kind(tv))
		}
		l.TimesMS = make([]float64, 0, len(tl))
		for i, e := range tl {
			l.TimesMS = append(l.TimesMS, d.number(e, fmt.Sprintf("latency.times_ms[%d]", i)))
		}
	}
	o.end()
	return l
}

// object is one JSON object being decoded; fields are taken out of m as
// they are read, so that what is left at the end is unknown.
type object struct {
	d    *decoder
	path string
	m    map[string]any
	used map[string]bool
}

func (d *decoder) object(v any, path string) *object {
	m, ok := v.(map[string]any)
	if !ok && d.err == nil {
		d.failf("%s: want an object, got %s", path, kind(v))
	}
	return &object{d: d, path: path, m: m, used: map[string]bool{}}
}

// field returns the value of key and whether it is present; a missing
// required field is an error.
func (o *object) field(key string, required bool) (any, bool) {
	v, ok := o.m[key]
	if !ok {
		if required && o.m != nil {
			o.d.failf("%s: missing field %q", o.path, key)
		}
		return nil, false
	}
	o.used[key] = true
	return v, true
}

func (o *object) str(key string, required bool) string {
	v, ok := o.field(key, required)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		o.d.failf("%s.%s: want a string, got %s", o.path, key, kind(v))
	}
	return s
}

func (o *object) boolean(key string) bool {
	v, ok := o.field(key, true)
	if !ok {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		o.d.failf("%s.%s: want true or false, got %s", o.path, key, kind(v))
	}
	return b
}

func (o *object) integer(key string) int {
	v, ok := o.field(key, true)
	if !ok {
		return 0
	}
	n, ok := v.(json.Number)
	if !ok {
		o.d.failf("%s.%s: want an integer, got %s", o.path, key, kind(v))
		return 0
	}
	// JSON numbers are doubles (RFC 8785): 3, 3.0 and 3e0 are one value.
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		o.d.failf("%s.%s: want an integer, got %s", o.path, key, clip(string(n)))
		return 0
	}
	return int(f)
}

func (o *object) float(key string) float64 {
	v, ok := o.field(key, true)
	if !ok {
		return 0
	}
	return o.d.number(v, o.path+"."+key)
}

func (d *decoder) number(v any, path string) float64 {
	n, ok := v.(json.Number)
	if !ok {
		d.failf("%s: want a number, got %s", path, kind(v))
		return 0
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		d.failf("%s: number %s is out of float64 range", path, clip(string(n)))
	}
	return f
}

// values returns the object at key as a map of plain values; nil when it
// is absent.
func (o *object) values(key string, required bool) map[string]any {
	v, ok := o.field(key, required)
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		o.d.failf("%s.%s: want an object, got %s", o.path, key, kind(v))
		return nil
	}
	out, err := plain(m)
	if err != nil {
		o.d.failf("%s.%s: %w", o.path, key, err)
		return nil
	}
	return out.(map[string]any)
}

// end fails on fields that were not read.
func (o *object) end() {
	for k := range o.m {
		if !o.used[k] {
			o.d.failf("%s: unknown field %s", o.path, clip(k))
			return
		}
	}
}

// plain converts the numbers of a generic JSON value to float64, or keeps
// them as json.Number when float64 cannot hold them exactly.
func plain(v any) (any, error) {
	switch v := v.(type) {
	case json.Number:
		canon, err := canonNumber(string(v))
		if err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(canon, 64)
		if err == nil {
			if b, err := json.Marshal(f); err == nil && string(b) == canon {
				return f, nil
			}
		}
		return v, nil
	case []any:
		for i, e := range v {
			p, err := plain(e)
			if err != nil {
				return nil, err
			}
			v[i] = p
		}
		return v, nil
	case map[string]any:
		for k, e := range v {
			p, err := plain(e)
			if err != nil {
				return nil, err
			}
			v[k] = p
		}
		return v, nil
	}
	return v, nil
}

// kind names the JSON type of a generic value, for errors.
func kind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}
