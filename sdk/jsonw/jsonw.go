// Package jsonw writes JSON values byte for byte as encoding/json does,
// without reflection: the primitives behind the module SDK's fast encoder and
// the models that encode large outputs themselves (module.RawJSON). In a wasm
// module they are several times faster than encoding/json.
package jsonw

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendFloat writes f as encoding/json writes a float of the given bit size
// (32 or 64): shortest round-trip digits, exponent form below 1e-6 and from
// 1e21, e-7 rather than e-07. f must be finite (encoding/json refuses NaN and
// ±Inf).
func AppendFloat(dst []byte, f float64, bits int) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' { // clean up e-09 to e-9
		if m := len(dst); m-n >= 4 && dst[m-4] == 'e' && dst[m-3] == '-' && dst[m-2] == '0' {
			dst[m-2] = dst[m-1]
			dst = dst[:m-1]
		}
	}
	return dst
}

// AppendString appends s as a JSON string exactly as encoding/json
// writes it (HTML-safe: <, > and & as \u003c, \u003e, \u0026; U+2028 and
// U+2029 escaped; invalid UTF-8 as \ufffd): json.Marshal of the ~25 KB SVG
// costs several times as much in WebAssembly. Runs of 8 bytes that need no
// escaping (most of the SVG's polylines) are tested and copied as one word.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		start := i
		for i+8 <= len(s) && !needsEscape(load8(s, i)) {
			i += 8
		}
		b = append(b, s[start:i]...)
		for end := min(i+8, len(s)); i < end; {
			var n int
			b, n = appendChar(b, s, i)
			i += n
		}
	}
	return append(b, '"')
}

// load8 returns the 8 bytes of s at i as a little-endian word (one load in
// WebAssembly).
func load8(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// needsEscape reports whether one of the 8 bytes of x is a control
// character, non-ASCII, or one of " \ < > & (exact word tests: a byte below
// n sets its high bit in (x − n·0x01…) & ^x, a zero byte in (x − 0x01…) & ^x).
func needsEscape(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	m := (x-0x20*ones)&^x&highs | x&highs |
		zero(x^'"'*ones) | zero(x^'\\'*ones) | zero(x^'<'*ones) | zero(x^'>'*ones) | zero(x^'&'*ones)
	return m != 0
}

// appendChar appends the character of s at i as encoding/json writes it
// in a string and returns its length in bytes.
func appendChar(b []byte, s string, i int) ([]byte, int) {
	const hex = "0123456789abcdef"
	c := s[i]
	if c < utf8.RuneSelf {
		switch {
		case c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&':
			b = append(b, c)
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		default: // other control characters and <, >, &
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		return b, 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && size == 1:
		b = append(b, `\ufffd`...)
	case r == '\u2028' || r == '\u2029':
		b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
	default:
		b = append(b, s[i:i+size]...)
	}
	return b, size
}
