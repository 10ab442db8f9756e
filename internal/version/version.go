package version

import "runtime/debug"

// Version is the release version; "dev" for untagged builds.
var Version = "dev"

// Commit is the VCS revision, set with -ldflags "-X
// github.com/quasim/quasim/internal/version.Commit=..." where the build
// records none itself (a build from a tarball, or with -buildvcs=false).
var Commit = ""

// String is the version plus the VCS revision: the one the build
// recorded, else Commit.
func String() string {
	if c := revision(); c != "" {
		return Version + " (" + c + ")"
	}
	return Version
}

// revision is the first 12 digits of the build's VCS revision, else of
// Commit; "" when neither is known.
func revision() string {
	c := Commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				c = s.Value
			}
		}
	}
	if len(c) > 12 {
		c = c[:12]
	}
	return c
}
