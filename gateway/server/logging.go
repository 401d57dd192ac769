package server

import (
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
	"toxgate/gateway/httpcore"
)

// NewLogger returns a slog logger writing format ("text" or "json") at level
// ("debug", "info", "warn", "error") to w.
func NewLogger(w io.Writer, format, level string) *slog.Logger {
	return slog.New(NewLogHandler(w, format, level))
}

// NewLogHandler is the slog handler behind NewLogger.
func NewLogHandler(w io.Writer, format, level string) slog.Handler {
	opts := &slog.HandlerOptions{Level: ParseLevel(level)}
	if format == "json" {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}

// ParseLevel maps "debug", "info", "warn", "error" to a slog level (info otherwise).
func ParseLevel(level string) slog.Level {
	switch strings.ToLower(level) {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

// NewAccessLogger returns the logger for the access log: the same layout as
// NewLogger's, rendered by httpcore.AccessHandler, which is made for one
// line per request.
func NewAccessLogger(w io.Writer, format, level string) *slog.Logger {
	return slog.New(httpcore.NewAccessHandler(w, format == "json", ParseLevel(level)))
}

// BufferedWriter batches small writes (access-log lines) into few large ones:
// it flushes when its buffer fills, every interval, and on Close. A crash
// can lose at most one interval of lines; errors are logged unbuffered.
type BufferedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	buf  []byte
	max  int
	done chan struct{}
	wg   sync.WaitGroup
}

// NewBufferedWriter returns a writer that batches into w.
func NewBufferedWriter(w io.Writer, size int, interval time.Duration) *BufferedWriter {
	b := &BufferedWriter{w: w, buf: make([]byte, 0, size), max: size, done: make(chan struct{})}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				b.Flush()
			case <-b.done:
				return
			}
		}
	}()
	return b
}

// Write appends p, flushing first if it would not fit.
func (b *BufferedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf)+len(p) > b.max {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
		if len(p) > b.max {
			return b.w.Write(p)
		}
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// Flush writes out what is buffered.
func (b *BufferedWriter) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

func (b *BufferedWriter) flushLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}

// Close stops the timer and flushes.
func (b *BufferedWriter) Close() error {
	close(b.done)
	b.wg.Wait()
	return b.Flush()
}
