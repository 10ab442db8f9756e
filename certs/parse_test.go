package certs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseJSON checks parseJSON against encoding/json: the same documents
// parse, to the same values, except that parseJSON also rejects duplicate
// keys and deep nesting.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-1E-2`, `true`, `false`, `null`,
		`{"a":[1,2,{"b":null}],"c":"d"}`, ` { "a" : 1 } `, `{"a":1,"a":2}`,
		`"\u00e9\ud83d\ude00\ud800\udc00\ud800x\udc00\ud800\ud800\udc00"`, `"\"\\\/\b\f\n\r\t"`,
		"\"\xff\xc3\x28\xed\xa0\x80\"", "\"\u2028\"", `01`, `1.`, `.5`, `1e`, `+1`, `[1,]`, `{"a":1,}`,
		`{"a" 1}`, `[1 2]`, `tru`, `nul`, `"\x"`, `"\u12"`, "\"a\tb\"", `[[[[[[[[[[]]]]]]]]]]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseJSON(data)
		var want any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		stdErr := dec.Decode(&want)
		if stdErr == nil {
			if _, e := dec.Token(); e == nil || dec.More() {
				stdErr = e
				if stdErr == nil {
					stdErr = errEOF // trailing data
				}
			}
		}
		valid := json.Valid(data)
		if err != nil {
			if valid && !strings.Contains(err.Error(), "duplicate key") && !strings.Contains(err.Error(), "nested deeper") {
				t.Fatalf("parseJSON(%q) = %v, but encoding/json accepts it", data, err)
			}
			return
		}
		if !valid {
			t.Fatalf("parseJSON(%q) = %#v, but it is not valid JSON", data, got)
		}
		if stdErr != nil {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("parseJSON(%q) = %#v, encoding/json reads %#v", data, got, want)
		}
	})
}

func TestParseJSONErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{`{"a":1,"a":1}`, "duplicate key"},
		{strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), "nested deeper"},
		{`{"a":1} x`, "after the JSON value"},
		{`{"a":`, "unexpected end"},
		{`"\q"`, `invalid escape`},
		{"\"a\nb\"", "control character"},
		{`01`, "after the JSON value"},
	}
	for _, tt := range tests {
		if _, err := parseJSON([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseJSON(%q) = %v, want an error saying %q", tt.in, err, tt.want)
		}
	}
	deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	if _, err := parseJSON([]byte(deep)); err != nil {
		t.Errorf("parseJSON(%d levels) = %v, want nil", maxDepth, err)
	}
}
