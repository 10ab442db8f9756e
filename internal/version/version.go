package version

import "runtime/debug"

// Version is the release version; "dev" for untagged builds.
var Version = "dev"

// String is the version plus the VCS revision when the build recorded one.
func String() string {
	v := Version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
	}
	return v
}
