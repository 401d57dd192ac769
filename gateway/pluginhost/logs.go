package pluginhost

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
)

// logWriter forwards a plugin's stderr to the host log: JSON lines from
// log/slog keep their level, message and attributes; other lines are logged
// as they are.
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
	if s, ok := rec["level"].(string); ok {
		_ = level.UnmarshalText([]byte(strings.ToUpper(s)))
	}
	msg, _ := rec["msg"].(string)
	delete(rec, "level")
	delete(rec, "msg")
	delete(rec, "time")
	attrs := make([]any, 0, 2*len(rec))
	for k, v := range rec {
		attrs = append(attrs, k, v)
	}
	w.log.Log(context.Background(), level, msg, attrs...)
}
