package datastore

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// sniffLen is how much of a file is read to detect encoding and delimiter.
const sniffLen = 64 << 10

// decodeText wraps r so that it yields UTF-8: a UTF-8 BOM is dropped,
// UTF-16 with a BOM is converted, and text that is not valid UTF-8 in its
// first 64 KiB is read as Windows-1252 (a superset of Latin-1). It returns
// the encoding's name and the first bytes (decoded) for sniffing.
func decodeText(r io.Reader) (io.Reader, string, []byte, error) {
	br := bufio.NewReaderSize(r, sniffLen)
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, "", nil, err
	}
	var out io.Reader
	enc := "utf-8"
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		_, _ = br.Discard(3)
		out = br
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		enc = "utf-16"
		out = transform.NewReader(br, unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder())
	default:
		check := head
		// a multi-byte character may be cut at the end of the sample
		for i := 0; i < 3 && len(check) > 0 && !utf8.Valid(check); i++ {
			check = check[:len(check)-1]
		}
		if utf8.Valid(check) {
			out = br
		} else {
			enc = "windows-1252"
			out = transform.NewReader(br, charmap.Windows1252.NewDecoder())
		}
	}
	ob := bufio.NewReaderSize(out, sniffLen)
	sample, err := ob.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, "", nil, err
	}
	return ob, enc, sample, nil
}

// sniffDelimiter picks the delimiter that splits the first lines into the
// same number (above one) of cells: tab, comma, semicolon or pipe, in that
// order of preference for ties. hint is the resource's format ("TSV" →
// tab).
func sniffDelimiter(sample []byte, hint string) rune {
	if strings.EqualFold(hint, "tsv") {
		return '\t'
	}
	lines := splitLines(sample, 20)
	best, bestScore := ',', -1
	for _, d := range []rune{'\t', ',', ';', '|'} {
		counts := map[int]int{}
		for _, l := range lines {
			counts[countOutsideQuotes(l, byte(d))]++
		}
		// the most common count, weighted by how many lines agree
		for n, agree := range counts {
			if n == 0 {
				continue
			}
			score := agree*1000 + n
			if score > bestScore {
				best, bestScore = d, score
			}
		}
	}
	return best
}

func splitLines(b []byte, max int) []string {
	var out []string
	for len(b) > 0 && len(out) < max {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(out) == 0 {
				out = append(out, string(b))
			}
			break // the last line of a sample may be cut
		}
		out = append(out, strings.TrimRight(string(b[:i]), "\r"))
		b = b[i+1:]
	}
	return out
}

func countOutsideQuotes(l string, d byte) int {
	n, in := 0, false
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case '"':
			in = !in
		case d:
			if !in {
				n++
			}
		}
	}
	return n
}

// newCSV reads delimited text the lenient way files come: any number of
// fields per row (short rows are padded, long ones refused), quotes as
// RFC 4180, \r\n or \n line ends.
func newCSV(r io.Reader, delim rune) *csv.Reader {
	c := csv.NewReader(r)
	c.Comma = delim
	c.FieldsPerRecord = -1
	c.LazyQuotes = true
	c.ReuseRecord = true
	return c
}

// headerNames turns a header row into valid, unique field names.
func headerNames(row []string) []string {
	out := make([]string, len(row))
	used := map[string]bool{}
	for i, h := range row {
		h = strings.TrimSpace(strings.ReplaceAll(h, `"`, ""))
		h = strings.TrimLeft(h, "_")
		h = strings.ReplaceAll(h, "\x00", "")
		if len(h) > 60 {
			h = h[:60]
			for !utf8.ValidString(h) {
				h = h[:len(h)-1]
			}
			h = strings.TrimSpace(h)
		}
		if h == "" {
			h = fmt.Sprintf("field%d", i+1)
		}
		base, n := h, 2
		for used[h] {
			h = fmt.Sprintf("%s_%d", base, n)
			n++
		}
		used[h] = true
		out[i] = h
	}
	return out
}

// guesser narrows each column's type over every cell: int, then numeric,
// then timestamp, else text. Empty cells do not count.
type guesser struct {
	isInt, isNum, isTime []bool
	big                  []bool
	seen                 []bool
}

func newGuesser(n int) *guesser {
	g := &guesser{isInt: make([]bool, n), isNum: make([]bool, n), isTime: make([]bool, n), big: make([]bool, n), seen: make([]bool, n)}
	for i := 0; i < n; i++ {
		g.isInt[i], g.isNum[i], g.isTime[i] = true, true, true
	}
	return g
}

func (g *guesser) add(row []string) {
	for i := 0; i < len(g.seen) && i < len(row); i++ {
		c := strings.TrimSpace(row[i])
		if c == "" {
			continue
		}
		g.seen[i] = true
		if g.isInt[i] {
			if n, err := strconv.ParseInt(c, 10, 64); err != nil || (len(c) > 1 && c[0] == '0') {
				// leading zeros (codes, CAS fragments) stay text-like
				g.isInt[i] = false
			} else if n < math.MinInt32 || n > math.MaxInt32 {
				g.big[i] = true
			}
		}
		if g.isNum[i] {
			f, err := strconv.ParseFloat(c, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || (len(c) > 1 && c[0] == '0' && c[1] != '.') {
				g.isNum[i] = false
			}
		}
		if g.isTime[i] {
			if _, ok := parseTimestamp(c); !ok {
				g.isTime[i] = false
			}
		}
	}
}

func (g *guesser) types() []string {
	out := make([]string, len(g.seen))
	for i := range out {
		switch {
		case !g.seen[i]:
			out[i] = "text"
		case g.isInt[i] && g.big[i]:
			out[i] = "int8"
		case g.isInt[i]:
			out[i] = "int"
		case g.isNum[i]:
			out[i] = "numeric"
		case g.isTime[i]:
			out[i] = "timestamp"
		default:
			out[i] = "text"
		}
	}
	return out
}
