package pluginhost

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// A plugin's slog lines and go-plugin's hclog lines reach the host log with
// their message, level and attributes; lines below the host's level are
// dropped.
func TestLogWriterRelaysPluginLines(t *testing.T) {
	var out bytes.Buffer
	w := &logWriter{log: slog.New(slog.NewJSONHandler(&out, nil)).With("plugin", "catalog")}
	_, _ = w.Write([]byte(`{"time":"2026-11-25T14:11:04Z","level":"WARN","msg":"catalog slow","component":"datastore","took":"1.5s"}` + "\n"))
	_, _ = w.Write([]byte(`{"@level":"error","@message":"plugin failed","@timestamp":"2026-11-25T14:11:04Z","reason":"x"}` + "\n"))
	_, _ = w.Write([]byte(`{"@level":"debug","@message":"plugin address","address":"/tmp/p"}` + "\nplain text\n"))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 relayed lines, got %d:\n%s", len(lines), out.String())
	}
	want := []map[string]string{
		{"level": "WARN", "msg": "catalog slow", "component": "datastore", "took": "1.5s", "plugin": "catalog"},
		{"level": "ERROR", "msg": "plugin failed", "reason": "x", "plugin": "catalog"},
		{"level": "INFO", "msg": "plain text", "source": "plugin-stderr"},
	}
	for i, line := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, line)
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Errorf("line %d: %s = %v, want %q (%s)", i, k, got[k], v, line)
			}
		}
		if _, ok := got["@message"]; ok {
			t.Errorf("line %d keeps hclog's @message: %s", i, line)
		}
	}
}
