package contract

import (
	"io"
	"log/slog"
	"os"
)

// NewLogger is the logger a plugin writes to w (its stderr): JSON lines at
// the level in EnvLogLevel, which the host relays into its own log.
// Durations are written as text ("1.2s") so that they read the same as the
// host's own lines.
func NewLogger(w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(os.Getenv(EnvLogLevel)))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindDuration {
				a.Value = slog.StringValue(a.Value.Duration().String())
			}
			return a
		}}))
}
