package datastore

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/xuri/excelize/v2"
)

// zipMagic starts every XLSX file (a zip archive).
var zipMagic = []byte("PK\x03\x04")

// isZip reports whether br starts with a zip archive.
func isZip(br *bufio.Reader) bool {
	head, _ := br.Peek(len(zipMagic))
	return bytes.Equal(head, zipMagic)
}

// xlsxToCSV reads an XLSX workbook from r and writes its first sheet as
// CSV to a temporary file, returned at its start (the caller removes it).
// Cells are read as Excel shows them (their number format applied), so
// numbers in the General format stay numbers and dates read as formatted.
func xlsxToCSV(r io.Reader, maxBytes int64) (*os.File, error) {
	raw, err := os.CreateTemp("", "toxgate-load-*.xlsx")
	if err != nil {
		return nil, err
	}
	defer os.Remove(raw.Name())
	defer raw.Close()
	n, err := io.Copy(raw, io.LimitReader(r, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if n > maxBytes {
		return nil, fmt.Errorf("the file is larger than %d bytes", maxBytes)
	}
	wb, err := excelize.OpenFile(raw.Name(), excelize.Options{UnzipSizeLimit: 4 * maxBytes, UnzipXMLSizeLimit: 4 * maxBytes})
	if err != nil {
		return nil, fmt.Errorf("cannot read the file as XLSX: %w", err)
	}
	defer wb.Close()
	sheets := wb.GetSheetList()
	if len(sheets) == 0 {
		return nil, errors.New("the workbook has no sheet")
	}
	rows, err := wb.Rows(sheets[0])
	if err != nil {
		return nil, fmt.Errorf("cannot read sheet %q: %w", sheets[0], err)
	}
	defer rows.Close()
	out, err := os.CreateTemp("", "toxgate-load-*.csv")
	if err != nil {
		return nil, err
	}
	w := csv.NewWriter(out)
	for rows.Next() {
		cells, err := rows.Columns()
		if err != nil {
			out.Close()
			os.Remove(out.Name())
			return nil, fmt.Errorf("cannot read sheet %q: %w", sheets[0], err)
		}
		if err := w.Write(cells); err != nil {
			out.Close()
			os.Remove(out.Name())
			return nil, err
		}
	}
	w.Flush()
	if err := errors.Join(w.Error(), rows.Error()); err != nil {
		out.Close()
		os.Remove(out.Name())
		return nil, fmt.Errorf("cannot read sheet %q: %w", sheets[0], err)
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		out.Close()
		os.Remove(out.Name())
		return nil, err
	}
	return out, nil
}
