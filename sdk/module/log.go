package module

import (
	"bytes"
	"context"
	"log/slog"
)

// Logger returns a logger whose records go to the host's log, tagged with the
// module's name. Attributes are rendered as key=value text.
func Logger() *slog.Logger { return logger }

var logger = slog.New(&hostHandler{buf: new(bytes.Buffer)})

// hostHandler renders a record with a text handler into a buffer and hands the
// line to the host. Guests are single-threaded, so one buffer is enough.
type hostHandler struct {
	inner slog.Handler
	buf   *bytes.Buffer
}

func (h *hostHandler) handler() slog.Handler {
	if h.inner == nil {
		h.inner = slog.NewTextHandler(h.buf, &slog.HandlerOptions{
			Level: slog.LevelDebug,
			ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
				if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey) {
					return slog.Attr{}
				}
				return a
			},
		})
	}
	return h.inner
}

func (h *hostHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *hostHandler) Handle(ctx context.Context, r slog.Record) error {
	h.buf.Reset()
	if err := h.handler().Handle(ctx, r); err != nil {
		return err
	}
	hostLog(int32(r.Level), bytes.TrimRight(h.buf.Bytes(), "\n"))
	return nil
}

func (h *hostHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &hostHandler{inner: h.handler().WithAttrs(as), buf: h.buf}
}

func (h *hostHandler) WithGroup(name string) slog.Handler {
	return &hostHandler{inner: h.handler().WithGroup(name), buf: h.buf}
}
