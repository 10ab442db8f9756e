package api

import (
	"encoding/json"
	"strings"
	"testing"
)

// The embedded document is an OpenAPI 3 document that describes its own
// route. The daemon's tests check it against the server.
func TestOpenAPIEmbedded(t *testing.T) {
	var doc struct {
		OpenAPI string                     `json:"openapi"`
		Paths   map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi = %q, want 3.x", doc.OpenAPI)
	}
	_, path, _ := strings.Cut(RouteOpenAPI, " ")
	if _, ok := doc.Paths[path]; !ok {
		t.Errorf("openapi.json has no path %s", path)
	}
}
