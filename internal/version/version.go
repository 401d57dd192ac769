// Package version holds the version of this build of toxgate, shared by the
// gateway and its plugins.
package version

import "runtime/debug"

// Version of this build: set by `make build` with
// -ldflags "-X toxgate/internal/version.Version=$(git describe)"; otherwise
// the VCS revision the go tool stamped into the binary ("<rev>-dirty" for a
// modified tree), and "dev" when neither is known (go run, tests).
var Version = ""

func init() {
	if Version == "" {
		Version = fromBuildInfo()
	}
}

// fromBuildInfo is the short VCS revision stamped by the go tool, or "dev".
func fromBuildInfo() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 7 {
		rev = rev[:7]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
