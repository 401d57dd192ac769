package plot

import "unicode/utf8"

// Text in titles, axis labels and legend names is UTF-8 (µ, ², −, … are
// written as they are) with two marks: "_{…}" sets its braces' content as a
// subscript and "^{…}" as a superscript, e.g. "C_{max} (µM)", "log_{2} fold
// change", "10^{−4}". Everything else is literal: a lone '_' or '^' (as in
// "heart_DNA_bound"), and the characters & < > " ' are escaped.

// shift is the baseline shift of a subscript (+) or superscript (−), in
// font sizes; scriptScale the size of the script text.
const (
	shift       = 0.3
	scriptScale = 0.75
)

// appendText appends s with its marks as SVG <tspan>s, for text of the
// given font size. A script run is a tspan moved by dy with a smaller font;
// the text after it a tspan moved back (dy, unlike baseline-shift, is drawn
// the same by every browser and by librsvg).
func appendText(b []byte, s string, size float64) []byte {
	for len(s) > 0 {
		i := scriptMark(s)
		if i < 0 {
			return appendEsc(b, s)
		}
		b = appendEsc(b, s[:i])
		end := i + 2
		for end < len(s) && s[end] != '}' {
			end++
		}
		dy := shift * size
		if s[i] == '^' {
			dy = -dy
		}
		b = append(b, `<tspan dy="`...)
		b = appendFixed1(b, dy)
		b = append(b, `" font-size="`...)
		b = appendFixed1(b, size*scriptScale)
		b = append(b, `">`...)
		b = appendEsc(b, s[i+2:end])
		b = append(b, `</tspan>`...)
		s = s[min(end+1, len(s)):]
		if len(s) > 0 {
			b = append(b, `<tspan dy="`...)
			b = appendFixed1(b, -dy)
			b = append(b, `">`...)
			// The rest, with any further marks, in the tspan back on the
			// baseline (a mark inside it is a tspan within it).
			b = appendText(b, s, size)
			return append(b, `</tspan>`...)
		}
	}
	return b
}

// scriptMark is the index of the first "_{" or "^{" in s, or -1.
func scriptMark(s string) int {
	for i := 0; i+1 < len(s); i++ {
		if (s[i] == '_' || s[i] == '^') && s[i+1] == '{' {
			return i
		}
	}
	return -1
}

// textWidth estimates the width of s (marks applied) in a sans-serif font
// of the given size: per-character widths of Helvetica/Arial/DejaVu Sans
// classes rounded up, so that a legend or margin sized by it holds the text
// in any of those fonts.
func textWidth(s string, size float64) float64 {
	w, scale := 0.0, 1.0
	for i := 0; i < len(s); {
		if j := scriptMark(s[i:]); j == 0 {
			scale = scriptScale
			i += 2
			continue
		}
		if s[i] == '}' && scale != 1 {
			scale = 1
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		w += scale * runeWidth(r)
	}
	return w * size
}

// runeWidth is the advance of r in ems, rounded up over the common sans
// fonts (DejaVu Sans is the widest of them).
func runeWidth(r rune) float64 {
	switch {
	case r == ' ':
		return 0.32
	case r == 'i' || r == 'l' || r == 'j' || r == '.' || r == ',' || r == ':' || r == ';' || r == '\'' || r == '|' || r == '!':
		return 0.3
	case r == 'f' || r == 't' || r == 'r' || r == 'I' || r == '(' || r == ')' || r == '[' || r == ']' || r == '/' || r == '-':
		return 0.42
	case r == 'm' || r == 'w' || r == 'M' || r == 'W' || r == '%' || r == '@':
		return 0.98
	case r >= 'A' && r <= 'Z':
		return 0.74
	case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r == 'µ', r == '_':
		return 0.64
	}
	return 0.7
}

// appendEsc appends s with & < > " ' escaped.
func appendEsc(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b = append(b, "&amp;"...)
		case '\'':
			b = append(b, "&#39;"...)
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '"':
			b = append(b, "&#34;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}
