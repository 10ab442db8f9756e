package sockapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/quasim/quasim/api"
)

// methods are those a route of the API may take (GET patterns take HEAD).
var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// allowedMethods lists, as an Allow header, the methods mux routes r's
// path with to a handler other than the catch-all "/"; "" when none.
func allowedMethods(mux *http.ServeMux, r *http.Request) string {
	var allow []string
	for _, m := range methods {
		if m == r.Method {
			continue
		}
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	return strings.Join(allow, ", ")
}

// methodNotAllowed answers 405 with the Allow header and an api.Error.
func methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	WriteJSON(w, http.StatusMethodNotAllowed, api.Error{
		Error: fmt.Sprintf("%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, allow),
		Code:  api.CodeInvalidArgument,
	})
}
