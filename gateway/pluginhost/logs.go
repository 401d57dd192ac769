package pluginhost

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"sync"
)

// logWriter forwards a plugin's stderr to the host log: JSON lines from
// log/slog (level, msg, time) and from go-plugin's hclog (@level,
// @message, @timestamp) keep their level, message and attributes; other
// lines are logged as they are.
type logWriter struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.line(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 {
		w.line(w.buf)
		w.buf = nil
	}
	return len(p), nil
}

func (w *logWriter) line(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	var rec map[string]any
	if json.Unmarshal(b, &rec) != nil {
		w.log.Info(string(b), "source", "plugin-stderr")
		return
	}
	var level slog.Level
	msg := ""
	for _, k := range [...]string{"level", "@level"} {
		if s, ok := rec[k].(string); ok {
			if strings.EqualFold(s, "trace") {
				s = "debug-4"
			}
			_ = level.UnmarshalText([]byte(strings.ToUpper(s)))
		}
	}
	for _, k := range [...]string{"msg", "@message"} {
		if s, ok := rec[k].(string); ok && s != "" {
			msg = s
		}
	}
	for _, k := range [...]string{"level", "msg", "time", "@level", "@message", "@timestamp", "@module"} {
		delete(rec, k)
	}
	if !w.log.Enabled(context.Background(), level) {
		return
	}
	keys := make([]string, 0, len(rec))
	for k := range rec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	attrs := make([]any, 0, 2*len(rec))
	for _, k := range keys {
		attrs = append(attrs, k, rec[k])
	}
	w.log.Log(context.Background(), level, msg, attrs...)
}
