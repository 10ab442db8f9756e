package report

import (
	"flag"
	"os"
	"testing"

	"github.com/quasim/quasim/internal/browsertest"
)

var screenshots = flag.String("screenshots", "", "write a PNG of each view of the fixture report into this directory")

// The fixture report renders every chart and table, quietly and offline.
func TestBrowserFixture(t *testing.T) {
	page := render(t, fixture())
	r, _ := browsertest.Open(t, page)
	if got, want := len(r.Charts), len(svgRe.FindAllString(page, -1)); got != want || got < 8 {
		t.Errorf("%d charts rendered, the page has %d", got, want)
	}
	if len(r.Tables) != 4 { // the jobs with trials
		t.Errorf("%d trial tables rendered, want 4", len(r.Tables))
	}
}

// TestScreenshots writes a PNG of each view of the fixture report with
// -screenshots DIR (make screenshots).
func TestScreenshots(t *testing.T) {
	if *screenshots == "" {
		t.Skip("no -screenshots DIR")
	}
	bin := browsertest.Chromium(t)
	rec := browsertest.NewRecorder(t)
	if err := os.MkdirAll(*screenshots, 0o755); err != nil {
		t.Fatal(err)
	}
	page := render(t, fixture())
	browsertest.Shoot(t, bin, rec, page, *screenshots, "fixture", "job-1")
}
