package api

import _ "embed" // OpenAPI

// RouteOpenAPI serves OpenAPI.
const RouteOpenAPI = "GET /v1/openapi.json"

// OpenAPI is the OpenAPI 3.0 document of the socket API, openapi.json:
// every route with its parameters, request and response bodies and the
// statuses it answers. The daemon's tests generate it from the route
// table and these wire types (go test ./daemon -run TestOpenAPIDocument
// -update) and check the running server against it.
//
//go:embed openapi.json
var OpenAPI []byte
