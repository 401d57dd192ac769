package ckan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Marshal encodes v as CKAN does (Python simplejson defaults): non-ASCII
// characters escaped as \uXXXX, separators ", " and ": ", HTML characters
// left as they are.
func Marshal(v any) ([]byte, error) {
	switch r := v.(type) {
	case RawJSON:
		if len(r) > 0 {
			return r, nil
		}
	case RawJSONParts:
		if r.Len() > 0 {
			return r.join(nil), nil
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("ckan: encode JSON: %w", err)
	}
	raw := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
	return pythonStyle(raw), nil
}

// pythonStyle rewrites compact JSON to simplejson's separators and ASCII
// escaping in one pass.
func pythonStyle(in []byte) []byte {
	out := make([]byte, 0, len(in)+len(in)/8+16)
	inString := false
	for i := 0; i < len(in); i++ {
		c := in[i]
		if inString {
			switch {
			case c == '\\':
				out = append(out, c, in[i+1])
				i++
			case c == '"':
				inString = false
				out = append(out, c)
			case c < utf8.RuneSelf:
				out = append(out, c)
			default:
				r, size := utf8.DecodeRune(in[i:])
				i += size - 1
				out = appendEscapedRune(out, r)
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			out = append(out, c)
		case ',':
			out = append(out, ',', ' ')
		case ':':
			out = append(out, ':', ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}

const hexDigits = "0123456789abcdef"

func appendEscapedRune(out []byte, r rune) []byte {
	if r > 0xFFFF {
		r -= 0x10000
		out = appendU(out, 0xD800+(r>>10))
		return appendU(out, 0xDC00+(r&0x3FF))
	}
	return appendU(out, r)
}

func appendU(out []byte, r rune) []byte {
	return append(out, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}

// RawJSON is a value already encoded as Marshal encodes it. Marshal and
// Success copy it as it is, so a result rendered once (and cached) is not
// encoded again.
type RawJSON []byte

// MarshalJSON returns r, for a RawJSON nested in another value.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// RawJSONParts is a value already encoded as Marshal encodes it, in pieces
// that are joined as they are. Pieces may be shared (cached encodings) and
// are never modified; Success copies them once, into the reply.
type RawJSONParts [][]byte

// Len is the length of the joined encoding.
func (p RawJSONParts) Len() int {
	n := 0
	for _, b := range p {
		n += len(b)
	}
	return n
}

func (p RawJSONParts) join(dst []byte) []byte {
	if dst == nil {
		dst = make([]byte, 0, p.Len())
	}
	for _, b := range p {
		dst = append(dst, b...)
	}
	return dst
}

// MarshalJSON returns the joined pieces, for RawJSONParts nested in another
// value.
func (p RawJSONParts) MarshalJSON() ([]byte, error) {
	if p.Len() == 0 {
		return []byte("null"), nil
	}
	return p.join(nil), nil
}

// AppendString appends s as Marshal encodes a string.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b, err := Marshal(s)
			if err != nil { // not reached: every string encodes
				return append(dst, `""`...)
			}
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
