package version

import (
	"strings"
	"testing"
)

// A commit set at link time shows when the build recorded no revision
// (go test records none).
func TestString(t *testing.T) {
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	Version, Commit = "1.2.3", "0123456789abcdef0123"
	if got := String(); got != "1.2.3 (0123456789ab)" {
		t.Errorf("String() = %q, want the version and 12 digits of the commit", got)
	}
	Commit = ""
	if got := String(); strings.Contains(got, "(") {
		t.Errorf("String() = %q with no commit known, want the version alone", got)
	}
}
