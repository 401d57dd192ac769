package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// The version a user reads from `toxgate --version` is the one status_show
// and the plugin report, and the gateway's log relays the plugin's lines
// with their message and one component each.
func TestVersionReportedEverywhere(t *testing.T) {
	g := harness.Start(t)
	bins := harness.Build(t)
	out, err := exec.Command(bins.Gateway, "--version").Output()
	if err != nil {
		t.Fatalf("toxgate --version: %v", err)
	}
	want := strings.TrimSpace(string(out))
	if os.Getenv("TOXGATE_BIN_DIR") != "" && want == "dev" {
		t.Errorf("a binary built by make reports version %q", want)
	}
	resp, body := get(t, g, "/api/3/action/status_show", nil)
	var st struct {
		Result struct {
			Version string `json:"toxgate_version"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &st); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status_show: %d %s", resp.StatusCode, body)
	}
	if st.Result.Version != want {
		t.Errorf("status_show toxgate_version = %q, toxgate --version = %q", st.Result.Version, want)
	}
	started := ""
	for _, line := range strings.Split(g.Logs(), "\n") {
		var rec struct {
			Msg     *string `json:"msg"`
			Version string  `json:"version"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec.Msg == nil || *rec.Msg == "" {
			t.Errorf("a log line without its message: %s", line)
		} else if *rec.Msg == "plugin started" {
			started = rec.Version
		}
		if strings.Count(line, `"component":`) > 1 {
			t.Errorf("a log line with two components: %s", line)
		}
	}
	if started != want {
		t.Errorf("the plugin reports version %q, the gateway %q", started, want)
	}
}
