package version

import (
	"os"
	"regexp"
	"runtime/debug"
	"testing"
)

// The Makefile stamps Version by its package path (-X path.Version=...), a
// string the compiler does not check: a path that names no package makes
// the linker ignore the flag silently. This test reads the Makefile's
// LDFLAGS and checks that they name this package's Version.
func TestMakefileStampsThisPackage(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LDFLAGS\s*:?=.*-X\s+(\S+)\.Version=`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile's LDFLAGS set no -X ....Version")
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build information")
	}
	if want := bi.Main.Path + "/internal/version"; string(m[1]) != want {
		t.Errorf("the Makefile stamps %s.Version; the version lives in %s", m[1], want)
	}
}

// Without -X, Version is never empty: the VCS revision or "dev".
func TestVersionIsNeverEmpty(t *testing.T) {
	if Version == "" {
		t.Error("Version is empty")
	}
}
