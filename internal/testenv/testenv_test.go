package testenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// absent is a tool that is never installed.
var absent = Tool{Name: "absent-tool", Debian: "absent-pkg", find: func() (string, error) {
	return "", errors.New("looked nowhere")
}}

// TestChildNeedsAbsent is run by TestMissing in a child process.
func TestChildNeedsAbsent(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "" {
		t.Skip("run by TestMissing")
	}
	RequireTool(t, absent)
	t.Log("reached after RequireTool")
}

// Without CI a missing tool skips the test and records the skip; under
// CI=true it fails it; CI=false is not CI.
func TestMissing(t *testing.T) {
	for _, c := range []struct {
		ci      string
		fail    bool
		logLine bool
	}{{"", false, true}, {"false", false, true}, {"true", true, false}, {"1", true, false}} {
		log := filepath.Join(t.TempDir(), "skips")
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildNeedsAbsent$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+c.ci, EnvSkipLog+"="+log)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != c.fail {
			t.Errorf("CI=%q: failed %v, want %v\n%s", c.ci, failed, c.fail, out)
		}
		if strings.Contains(string(out), "reached after RequireTool") {
			t.Errorf("CI=%q: the test went on without the tool\n%s", c.ci, out)
		}
		if !strings.Contains(string(out), "no absent-tool (looked nowhere); Debian: apt-get install absent-pkg") {
			t.Errorf("CI=%q: the message does not say what is missing\n%s", c.ci, out)
		}
		b, _ := os.ReadFile(log)
		if want := "absent-tool\tabsent-pkg\tTestChildNeedsAbsent\n"; (string(b) == want) != c.logLine {
			t.Errorf("CI=%q: skip log %q (want a line: %v)", c.ci, b, c.logLine)
		}
	}
}

// Find names what it looked for when a tool is not there, and a path
// that exists when it is.
func TestFind(t *testing.T) {
	for _, tool := range []Tool{Chromium, PostgreSQL, RustWasm32, WasmOpt, RDFLib, Bibutils, CiteProc, XMLLint} {
		p, err := Find(tool)
		if err != nil {
			if err.Error() == "" {
				t.Errorf("%s: empty error", tool.Name)
			}
			continue
		}
		if _, statErr := exec.LookPath(p); statErr != nil {
			if _, e := os.Stat(p); e != nil {
				t.Errorf("%s: found %q, which does not exist", tool.Name, p)
			}
		}
	}
}
