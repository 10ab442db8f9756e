package browsertest

import (
	"strings"
	"testing"
)

// The harness itself sees what it must catch: a request to the network,
// a script error and a series that draws nothing.
func TestBrowserCatches(t *testing.T) {
	bin := Chromium(t)
	rec := NewRecorder(t)
	page := `<!DOCTYPE html><html><head></head><body><img src="http://example.invalid/x.png">` +
		`<svg class="chart" id="c" data-series="2"><g class="series" data-name="a"><rect width="5" height="5"/></g><g class="series" data-name="b"></g></svg>` +
		`<script>nosuchfunction()</script></body></html>`
	r, stderr, _ := Load(t, bin, rec, page)
	if len(r.Errors) == 0 || !strings.Contains(stderr, ":CONSOLE") {
		t.Errorf("script error not seen: %q", r.Errors)
	}
	if len(r.Charts) != 1 || len(r.Charts[0].Series) != 2 || r.Charts[0].Series[1].N != 0 {
		t.Errorf("empty series not seen: %+v", r.Charts)
	}
	if q := rec.Requests(); len(q) == 0 || !strings.Contains(strings.Join(q, " "), "example.invalid") {
		t.Errorf("proxy saw %q, want the image request", q)
	}
}
