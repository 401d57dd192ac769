package httpcore

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// The access handler writes valid JSON with the same keys and values as
// slog's JSON handler.
func TestAccessHandlerJSONMatchesSlog(t *testing.T) {
	var fast, std bytes.Buffer
	attrs := []slog.Attr{
		slog.String("method", "GET"), slog.String("path", "/a \"quoted\"\n\tpath/é\x01"),
		slog.Int("status", 200), slog.Duration("duration", 1500*time.Microsecond),
		slog.Bool("ok", true), slog.Float64("f", 0.25), slog.Group("g", slog.String("x", "y")),
	}
	slog.New(NewAccessHandler(&fast, true, nil)).LogAttrs(t.Context(), slog.LevelInfo, "request", attrs...)
	slog.New(slog.NewJSONHandler(&std, nil)).LogAttrs(t.Context(), slog.LevelInfo, "request", attrs...)
	var a, b map[string]any
	if err := json.Unmarshal(fast.Bytes(), &a); err != nil {
		t.Fatalf("not JSON: %s (%v)", fast.Bytes(), err)
	}
	if err := json.Unmarshal(std.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	delete(a, "time")
	delete(b, "time")
	// slog nests groups; the access handler flattens them with dots.
	b["g.x"] = b["g"].(map[string]any)["x"]
	delete(b, "g")
	for k, v := range b {
		if a[k] != v {
			t.Errorf("%s: access handler %v, slog %v", k, a[k], v)
		}
	}
	if len(a) != len(b) {
		t.Errorf("keys differ: %v vs %v", a, b)
	}
}

func TestAccessHandlerTextAndLevel(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(NewAccessHandler(&out, false, slog.LevelInfo)).With("component", "http")
	log.Debug("hidden")
	log.Info("request", "path", "/IsAlive", "status", 200, "note", "two words")
	line := out.String()
	for _, want := range []string{"level=INFO", "msg=request", "component=http", "path=/IsAlive", "status=200", `note="two words"`} {
		if !strings.Contains(line, want) {
			t.Errorf("%q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "hidden") || strings.Count(line, "\n") != 1 {
		t.Errorf("unexpected output %q", line)
	}
}

func BenchmarkAccessHandlerVsSlogJSON(b *testing.B) {
	attrs := []slog.Attr{slog.String("method", "GET"), slog.String("path", "/IsAlive"), slog.Int("status", 200),
		slog.Int("bytes", 48), slog.Duration("duration", 71*time.Microsecond), slog.String("request_id", "634777888bc8-1"),
		slog.String("remote", "127.0.0.1"), slog.String("route", "/IsAlive")}
	for _, c := range []struct {
		name string
		h    slog.Handler
	}{{"access", NewAccessHandler(discard{}, true, nil)}, {"slog-json", slog.NewJSONHandler(discard{}, nil)}} {
		log := slog.New(c.h)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				log.LogAttrs(b.Context(), slog.LevelInfo, "request", attrs...)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// The access middleware's direct line (logRequest) is the line Handle
// writes for the same record, in JSON and text, for IPv4, IPv4-mapped,
// IPv6 and non-TCP clients and paths that need escaping.
func TestAccessLineMatchesHandle(t *testing.T) {
	when := time.Date(2026, 11, 27, 18, 0, 0, 123456789, time.UTC)
	for _, json := range []bool{true, false} {
		for _, c := range []struct {
			addr net.Addr
			path string
		}{
			{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, "/IsAlive"},
			{&net.TCPAddr{IP: net.ParseIP("::ffff:10.0.0.2"), Port: 1}, "/a \"quoted\"\n\tpath/é\x01 x=y"},
			{&net.TCPAddr{IP: net.ParseIP("2001:db8::1"), Port: 1}, ""},
			{&net.UnixAddr{Name: "@sock \"x\"", Net: "unix"}, "/p"},
		} {
			var fast, std bytes.Buffer
			e := accessEntry{when: when, method: "GET", path: []byte(c.path), status: 200, bytes: 48,
				duration: 1500 * time.Microsecond, requestID: "abc-1", route: "/IsAlive"}
			e.remote, e.remoteStr = remoteAddr(c.addr)
			if err := NewAccessHandler(&fast, json, nil).logRequest(&e); err != nil {
				t.Fatal(err)
			}
			remote := c.addr.String()
			if ta, ok := c.addr.(*net.TCPAddr); ok {
				remote = ta.IP.String()
			}
			r := slog.NewRecord(when, slog.LevelInfo, "request", 0)
			r.AddAttrs(slog.String("method", "GET"), slog.String("path", c.path), slog.Int("status", 200), slog.Int("bytes", 48),
				slog.Duration("duration", 1500*time.Microsecond), slog.String("request_id", "abc-1"),
				slog.String("remote", remote), slog.String("route", "/IsAlive"))
			if err := NewAccessHandler(&std, json, nil).Handle(t.Context(), r); err != nil {
				t.Fatal(err)
			}
			if fast.String() != std.String() {
				t.Errorf("json %v:\n%s\nwant\n%s", json, fast.String(), std.String())
			}
		}
	}
}
