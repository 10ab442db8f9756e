package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"testing"
)

// validate checks v (decoded JSON) against a JSON schema using only the
// keywords the FAIR T4 results schema uses; any other keyword fails, so a
// schema this cannot check fully is never passed silently.
func validate(schema map[string]any, v any, at string) error {
	for kw, arg := range schema {
		switch kw {
		case "$schema", "$id", "description", "example":
		case "type":
			types, ok := arg.([]any)
			if !ok {
				types = []any{arg}
			}
			if !slices.ContainsFunc(types, func(t any) bool { return jsonType(v, t.(string)) }) {
				return fmt.Errorf("%s: %v is not of type %v", at, v, arg)
			}
		case "enum":
			if !slices.ContainsFunc(arg.([]any), func(e any) bool { return e == v }) {
				return fmt.Errorf("%s: %v is not one of %v", at, v, arg)
			}
		case "pattern":
			if s, ok := v.(string); ok && !regexp.MustCompile(arg.(string)).MatchString(s) {
				return fmt.Errorf("%s: %q does not match %s", at, s, arg)
			}
		case "required":
			if obj, ok := v.(map[string]any); ok {
				for _, name := range arg.([]any) {
					if _, ok := obj[name.(string)]; !ok {
						return fmt.Errorf("%s: %q is required", at, name)
					}
				}
			}
		case "properties":
			if obj, ok := v.(map[string]any); ok {
				for name, sub := range arg.(map[string]any) {
					if x, ok := obj[name]; ok {
						if err := validate(sub.(map[string]any), x, at+"."+name); err != nil {
							return err
						}
					}
				}
			}
		case "items":
			if arr, ok := v.([]any); ok {
				for i, x := range arr {
					if err := validate(arg.(map[string]any), x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
						return err
					}
				}
			}
		default:
			return fmt.Errorf("schema keyword %q at %s: not supported by this validator", kw, at)
		}
	}
	return nil
}

func jsonType(v any, t string) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	}
	return false
}

// validateT4 checks a T4 results file against the official schema.
func validateT4(t *testing.T, file string) {
	t.Helper()
	var schema map[string]any
	data, err := os.ReadFile("testdata/fair-t4/results-schema.json")
	if err == nil {
		err = json.Unmarshal(data, &schema)
	}
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if data, err = os.ReadFile(file); err == nil {
		err = json.Unmarshal(data, &doc)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(schema, doc, "$"); err != nil {
		t.Errorf("%s against the FAIR T4 results schema: %v", file, err)
	}
}

// The validator itself rejects what the schema forbids.
func TestValidateT4Schema(t *testing.T) {
	t.Parallel()
	var schema map[string]any
	data, _ := os.ReadFile("testdata/fair-t4/results-schema.json")
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	ok := `{"schema_version":"1.0.0","results":[{"configuration":{},"times":{"runtimes":[1]},"invalidity":"correct","correctness":1,"measurements":[{"name":"time","value":1,"unit":"ms"}]}]}`
	for _, tt := range []struct{ doc, want string }{
		{ok, ""},
		{`{"schema_version":"one","results":[]}`, "does not match"},
		{`{"results":[{"configuration":{},"times":{},"correctness":1}]}`, `"invalidity" is required`},
		{`{"results":[{"configuration":{},"times":{},"invalidity":"fine","correctness":1}]}`, "is not one of"},
		{`{"results":[{"configuration":{},"times":{"framework":"0"},"invalidity":"correct","correctness":1}]}`, "is not of type"},
		{`{"results":[{"configuration":{},"times":{},"invalidity":"correct","correctness":1,"measurements":[{"value":true}]}]}`, "is not of type"},
	} {
		var doc any
		if err := json.Unmarshal([]byte(tt.doc), &doc); err != nil {
			t.Fatal(err)
		}
		err := validate(schema, doc, "$")
		if (tt.want == "") != (err == nil) || (err != nil && !regexp.MustCompile(regexp.QuoteMeta(tt.want)).MatchString(err.Error())) {
			t.Errorf("validate(%s) = %v, want %q", tt.doc, err, tt.want)
		}
	}
}
