package httpcore

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// AccessHandler is a slog.Handler made for the access log, the one log
// written on every request: it renders records in the same text or JSON
// layout as slog's own handlers (time, level, msg, then the attributes) but
// with no reflection and one reused buffer, so that logging a request costs
// a fraction of what the general handlers cost. Groups are flattened with
// dots; values of other kinds than strings, numbers, booleans, durations and
// times are rendered with their String method.
type AccessHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	json  bool
	level slog.Leveler
	pre   []slog.Attr
	group string
	buf   *[]byte
}

// NewAccessHandler writes records to w as JSON (json true) or text.
func NewAccessHandler(w io.Writer, json bool, level slog.Leveler) *AccessHandler {
	b := make([]byte, 0, 1024)
	return &AccessHandler{mu: &sync.Mutex{}, w: w, json: json, level: level, buf: &b}
}

// Enabled reports whether records at lv are written.
func (h *AccessHandler) Enabled(_ context.Context, lv slog.Level) bool {
	min := slog.LevelInfo
	if h.level != nil {
		min = h.level.Level()
	}
	return lv >= min
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *AccessHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.pre = append(append([]slog.Attr(nil), h.pre...), qualify(h.group, attrs)...)
	return &c
}

// WithGroup returns a handler that prefixes later keys with name.
func (h *AccessHandler) WithGroup(name string) slog.Handler {
	c := *h
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	return &c
}

func qualify(group string, attrs []slog.Attr) []slog.Attr {
	if group == "" {
		return attrs
	}
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = slog.Attr{Key: group + "." + a.Key, Value: a.Value}
	}
	return out
}

// Handle writes one record as one line.
func (h *AccessHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := (*h.buf)[:0]
	if h.json {
		b = append(b, `{"time":"`...)
		b = r.Time.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"`...)
		b = append(b, r.Level.String()...)
		b = append(b, `","msg":`...)
		b = appendJSONString(b, r.Message)
	} else {
		b = append(b, "time="...)
		b = r.Time.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
		b = append(b, " level="...)
		b = append(b, r.Level.String()...)
		b = append(b, " msg="...)
		b = appendText(b, r.Message)
	}
	for _, a := range h.pre {
		b = h.appendAttr(b, "", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		b = h.appendAttr(b, h.group, a)
		return true
	})
	if h.json {
		b = append(b, '}')
	}
	b = append(b, '\n')
	*h.buf = b
	_, err := h.w.Write(b)
	return err
}

func (h *AccessHandler) appendAttr(b []byte, group string, a slog.Attr) []byte {
	v := a.Value.Resolve()
	if a.Key == "" {
		return b
	}
	key := a.Key
	if group != "" {
		key = group + "." + key
	}
	if v.Kind() == slog.KindGroup {
		for _, g := range v.Group() {
			b = h.appendAttr(b, key, g)
		}
		return b
	}
	if h.json {
		b = append(b, ',')
		b = appendJSONString(b, key)
		b = append(b, ':')
		switch v.Kind() {
		case slog.KindString:
			return appendJSONString(b, v.String())
		case slog.KindInt64:
			return strconv.AppendInt(b, v.Int64(), 10)
		case slog.KindUint64:
			return strconv.AppendUint(b, v.Uint64(), 10)
		case slog.KindFloat64:
			return strconv.AppendFloat(b, v.Float64(), 'g', -1, 64)
		case slog.KindBool:
			return strconv.AppendBool(b, v.Bool())
		case slog.KindDuration:
			return strconv.AppendInt(b, int64(v.Duration()), 10) // nanoseconds, as slog.JSONHandler
		case slog.KindTime:
			b = append(b, '"')
			b = v.Time().AppendFormat(b, time.RFC3339Nano)
			return append(b, '"')
		default:
			return appendJSONString(b, v.String())
		}
	}
	b = append(b, ' ')
	b = append(b, key...)
	b = append(b, '=')
	switch v.Kind() {
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindDuration:
		return append(b, v.Duration().String()...)
	default:
		return appendText(b, v.String())
	}
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, `\u00`...)
				b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendText appends s bare when it needs no quoting, else quoted.
func appendText(b []byte, s string) []byte {
	if s == "" {
		return append(b, `""`...)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == '=' || c == '"' || c >= utf8.RuneSelf {
			return strconv.AppendQuote(b, s)
		}
	}
	return append(b, s...)
}
