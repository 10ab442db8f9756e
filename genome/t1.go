package genome

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// T1 is a FAIR T1 input file: the tuning problem of one kernel.
type T1 struct {
	Name        string   // General.BenchmarkName
	Params      []Param  // ConfigurationSpace.TuningParameters
	Constraints []string // ConfigurationSpace.Conditions[].Expression
	ProblemSize []int    // KernelSpecification.ProblemSize, when numeric
	source      string   // file name for errors
}

type t1File struct {
	General struct {
		BenchmarkName string `json:"BenchmarkName"`
	} `json:"General"`
	ConfigurationSpace struct {
		TuningParameters []struct {
			Name    string          `json:"Name"`
			Type    string          `json:"Type"`
			Values  json.RawMessage `json:"Values"`
			Default json.RawMessage `json:"Default"`
		} `json:"TuningParameters"`
		Conditions []struct {
			Expression string   `json:"Expression"`
			Parameters []string `json:"Parameters"`
		} `json:"Conditions"`
	} `json:"ConfigurationSpace"`
	KernelSpecification struct {
		ProblemSize json.RawMessage `json:"ProblemSize"`
	} `json:"KernelSpecification"`
}

// ParseT1 reads a FAIR T1 file. name is used in errors.
func ParseT1(name string, data []byte) (*T1, error) {
	var f t1File
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, jsonErr(data, err))
	}
	t := &T1{Name: f.General.BenchmarkName, source: name}
	if len(f.ConfigurationSpace.TuningParameters) == 0 {
		return nil, fmt.Errorf("%s: ConfigurationSpace.TuningParameters: no parameters", name)
	}
	for i, tp := range f.ConfigurationSpace.TuningParameters {
		field := fmt.Sprintf("%s: ConfigurationSpace.TuningParameters[%d] (%q)", name, i, tp.Name)
		kind, ok := ParseKind(tp.Type)
		if !ok {
			return nil, fmt.Errorf("%s: Type %q: want int, float, bool or string", field, tp.Type)
		}
		vals, err := t1Values(tp.Values)
		if err != nil {
			return nil, fmt.Errorf("%s: Values: %w", field, err)
		}
		if len(vals) == 0 {
			return nil, fmt.Errorf("%s: Values: empty list", field)
		}
		for j, v := range vals {
			cv, err := convertKind(v, kind)
			if err != nil {
				return nil, fmt.Errorf("%s: Values[%d]: %w", field, j, err)
			}
			vals[j] = cv
		}
		p := Param{Name: tp.Name, Kind: kind, Values: vals}
		p.Default = t1Default(tp.Default, vals, kind)
		t.Params = append(t.Params, p)
	}
	for i, c := range f.ConfigurationSpace.Conditions {
		if strings.TrimSpace(c.Expression) == "" {
			return nil, fmt.Errorf("%s: ConfigurationSpace.Conditions[%d]: empty Expression", name, i)
		}
		t.Constraints = append(t.Constraints, c.Expression)
	}
	if ps := f.KernelSpecification.ProblemSize; len(ps) > 0 {
		var dims []any
		if json.Unmarshal(ps, &dims) == nil {
			for _, d := range dims {
				if x, ok := d.(float64); ok && x == math.Trunc(x) {
					t.ProblemSize = append(t.ProblemSize, int(x))
				}
			}
		}
	}
	return t, nil
}

// Space builds the search space of the T1 file.
func (t *T1) Space() (*Space, error) {
	s, err := NewSpace(t.Params, SpaceOptions{Constraints: t.Constraints})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.source, err)
	}
	return s, nil
}

// t1Values accepts a Values field written as a string holding a Python list
// expression, or as a JSON array.
func t1Values(raw json.RawMessage) ([]Value, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return EvalList(s)
	}
	var arr []any
	if err := json.Unmarshal(raw, &arr); err != nil {
		return nil, fmt.Errorf("want a string or an array, got %s", truncate(string(raw), 40))
	}
	out := make([]Value, 0, len(arr))
	for i, a := range arr {
		v, err := ValueOf(a)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// ValueOf converts a value decoded from JSON (float64 or json.Number, bool,
// string) into a Value. Integral numbers become ints, as Python reads them.
func ValueOf(a any) (Value, error) {
	switch x := a.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return Int(int64(x)), nil
		}
		return Float(x), nil
	case json.Number: // "1.0" stays a float: Python reads it so
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return Int(i), nil
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return Value{}, fmt.Errorf("number %s: %w", x, err)
		}
		return Float(f), nil
	case bool:
		return Bool(x), nil
	case string:
		return Str(x), nil
	}
	return Value{}, fmt.Errorf("unsupported value %v", a)
}

func convertKind(v Value, k Kind) (Value, error) {
	switch k {
	case KindInt:
		switch v.Kind {
		case KindInt:
			return v, nil
		case KindBool:
			return Int(v.I), nil
		case KindFloat:
			if v.F == math.Trunc(v.F) && math.Abs(v.F) < 1<<53 {
				return Int(int64(v.F)), nil
			}
		}
	case KindFloat:
		if f, ok := v.Float64(); ok {
			return Float(f), nil
		}
	case KindBool:
		if v.Kind == KindBool {
			return v, nil
		}
		if v.Kind == KindInt && (v.I == 0 || v.I == 1) {
			return Bool(v.I == 1), nil
		}
	case KindString:
		if v.Kind == KindString {
			return v, nil
		}
		return Str(v.String()), nil
	}
	return Value{}, fmt.Errorf("value %s is not a %s", v, k)
}

// t1Default finds the default's index. T1 files in the wild give defaults
// that are not among the values, or wrap them in a list; those fall back to
// the first value rather than rejecting the file.
func t1Default(raw json.RawMessage, vals []Value, kind Kind) int {
	if len(raw) == 0 {
		return 0
	}
	var a any
	if json.Unmarshal(raw, &a) != nil {
		return 0
	}
	if arr, ok := a.([]any); ok && len(arr) == 1 {
		a = arr[0]
	}
	v, err := ValueOf(a)
	if err != nil {
		return 0
	}
	if v, err = convertKind(v, kind); err != nil {
		return 0
	}
	for i, w := range vals {
		if w.Equal(v) {
			return i
		}
	}
	return 0
}

// jsonErr adds the line and column to a JSON syntax error.
func jsonErr(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var off int64
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		return err
	}
	line, col := 1, 1
	for i := int64(0); i < off && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
