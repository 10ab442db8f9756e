// Package browsertest opens pages in a real headless Chromium (Debian's
// chromium package) for tests: it finds the browser or skips, sends every
// request through a proxy that refuses and records it, and instruments
// the page with a check script that measures each chart's series by their
// bounding boxes and records script errors, console output and
// Content-Security-Policy violations.
//
// This package has no compatibility promise outside quasim.
package browsertest
