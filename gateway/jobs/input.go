package jobs

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrInput marks an input table the job cannot read (a 422 for the client).
var ErrInput = errors.New("input table")

// readTable reads a CSV or TSV table (the delimiter is the one of the header
// line: a tab when it has tabs and no commas) and calls row for each record
// after the header. Records may have fewer or more fields than the header;
// the caller decides.
func readTable(r io.Reader, filename string, maxRows int, row func([]string) error) (header []string, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(64 << 10)
	line, _, _ := bytes.Cut(head, []byte("\n"))
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = false
	if strings.HasSuffix(strings.ToLower(filename), ".tsv") || bytes.Contains(line, []byte("\t")) && !bytes.Contains(line, []byte(",")) {
		cr.Comma = '\t'
	}
	header, err = cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: the file is empty", ErrInput)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	n := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return header, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInput, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" && len(header) > 1 {
			continue // blank line
		}
		if n++; n > maxRows {
			return nil, fmt.Errorf("%w: more than %d rows (jobs.max_rows)", ErrInput, maxRows)
		}
		if err := row(rec); err != nil {
			return nil, err
		}
	}
}

// column finds name among header (exactly, else ignoring case); -1 if absent.
func column(header []string, name string) int {
	for i, h := range header {
		if h == name {
			return i
		}
	}
	for i, h := range header {
		if strings.EqualFold(h, name) {
			return i
		}
	}
	return -1
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
