package modulehost

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"unicode/utf8"
)

// maxCanonicalDepth bounds the nesting of a value the response cache keys;
// a deeper value is not cached (it is still answered).
const maxCanonicalDepth = 64

// canonicalJSON returns the canonical text of one JSON value, the response
// cache's key for it: no insignificant white space, object members sorted
// by key, strings re-encoded from their decoded text (so "\u0041" and "A"
// are one key), numbers kept as written (1 and 1.0 stay two keys: a module
// decoding into an integer accepts one and refuses the other). ok is false
// when the value cannot be keyed safely, and the caller then does not
// cache: not valid JSON, not UTF-8 (decoding would replace bytes), a
// surrogate escape (a lone one decodes to U+FFFD, as a literal U+FFFD
// does, where some parsers refuse it), an object with a duplicate key
// (parsers differ on which one wins), or deeper than maxCanonicalDepth.
func canonicalJSON(b []byte) (out []byte, ok bool) {
	if !utf8.Valid(b) || hasSurrogateEscape(b) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var buf bytes.Buffer
	buf.Grow(len(b))
	if err := canonicalValue(dec, &buf, 0); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false // trailing data
	}
	return buf.Bytes(), true
}

var errNotCanonical = errors.New("value cannot be keyed")

// canonicalValue writes the next value of dec to buf in canonical form.
func canonicalValue(dec *json.Decoder, buf *bytes.Buffer, depth int) error {
	if depth > maxCanonicalDepth {
		return errNotCanonical
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			buf.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					buf.WriteByte(',')
				}
				if err := canonicalValue(dec, buf, depth+1); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // ']'
				return err
			}
			buf.WriteByte(']')
		case '{':
			type member struct {
				key string
				val []byte
			}
			var ms []member
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, ok := kt.(string)
				if !ok {
					return errNotCanonical
				}
				var vb bytes.Buffer
				if err := canonicalValue(dec, &vb, depth+1); err != nil {
					return err
				}
				ms = append(ms, member{k, vb.Bytes()})
			}
			if _, err := dec.Token(); err != nil { // '}'
				return err
			}
			sort.Slice(ms, func(i, j int) bool { return ms[i].key < ms[j].key })
			buf.WriteByte('{')
			for i, m := range ms {
				if i > 0 {
					if m.key == ms[i-1].key {
						return errNotCanonical
					}
					buf.WriteByte(',')
				}
				writeJSONString(buf, m.key)
				buf.WriteByte(':')
				buf.Write(m.val)
			}
			buf.WriteByte('}')
		default:
			return errNotCanonical
		}
	case string:
		writeJSONString(buf, t)
	case json.Number:
		buf.WriteString(string(t))
	case bool:
		if t {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case nil:
		buf.WriteString("null")
	default:
		return errNotCanonical
	}
	return nil
}

func writeJSONString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a valid UTF-8 string always encodes
	buf.Write(b)
}

// hasSurrogateEscape reports whether b holds a \uD800–\uDFFF escape (or
// what looks like one after an escaped backslash: refusing those too only
// costs a cache entry).
func hasSurrogateEscape(b []byte) bool {
	for {
		i := bytes.Index(b, []byte(`\u`))
		if i < 0 || i+3 >= len(b) {
			return false
		}
		if c, d := b[i+2], b[i+3]; (c == 'd' || c == 'D') && (d >= '8' && d <= '9' || d >= 'a' && d <= 'f' || d >= 'A' && d <= 'F') {
			return true
		}
		b = b[i+2:]
	}
}
