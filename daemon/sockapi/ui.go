package sockapi

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/report"
	"github.com/quasim/quasim/report/collect"
)

// uiRefresh is how often a /ui/ page reloads itself.
const uiRefresh = 15 * time.Second

// uiHandler serves GET /ui/: the HTML report of every kernel, or of those
// named by ?kernel= (repeatable), reloading every ?refresh= seconds
// (default uiRefresh), read from the daemon's own socket API as
// quasimctl report reads it, so the page shows exactly what the API
// serves. It is read-only and behind the API's guard: a request with
// Origin or Referer, or for a Host other than localhost, is refused. The
// page loads nothing and reloads itself with location.reload() under
// Referrer-Policy no-referrer (a reload otherwise sends the page as its
// Referer, which the guard refuses), so it stays live as cycles run.
func uiHandler(socket, version string) http.Handler {
	c := &client.Client{Socket: socket, Version: version}
	return guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ui/" {
			http.NotFound(w, r)
			return
		}
		in, err := collect.Collect(r.Context(), c, r.URL.Query()["kernel"], io.Discard)
		if err != nil {
			WriteError(w, err)
			return
		}
		in.Title = "quasimd live"
		in.RefreshS = int(uiRefresh / time.Second)
		if v := r.URL.Query().Get("refresh"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 2 || n > 3600 {
				WriteError(w, Invalidf("refresh %q: want seconds from 2 to 3600", v))
				return
			}
			in.RefreshS = n
		}
		var b bytes.Buffer
		if err := report.Write(&b, in); err != nil {
			WriteError(w, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'")
		h.Set("Referrer-Policy", "no-referrer") // the reload must pass the guard
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		w.Write(b.Bytes())
	}))
}
