package datastore

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
)

// gzipMagic opens every gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// isGzip reports whether br starts a gzip stream (a .csv.gz, whatever the
// resource's format says).
func isGzip(br *bufio.Reader) bool {
	head, _ := br.Peek(len(gzipMagic))
	return bytes.Equal(head, gzipMagic)
}

// maxInflate bounds what one byte of a compressed file may expand to when
// loaded (an XLSX workbook's sheet or a .gz file): 8 times the file limit
// in all.
const maxInflate = 8

// gunzip is the text of the gzip stream br, bounded to maxInflate times
// maxBytes (the limit's reader reports when it was reached).
func gunzip(br *bufio.Reader, maxBytes int64) (*bufio.Reader, *io.LimitedReader, error) {
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, nil, fmt.Errorf("the file starts as gzip but cannot be read as gzip: %w", err)
	}
	limited := &io.LimitedReader{R: zr, N: maxInflate*maxBytes + 1}
	return bufio.NewReaderSize(limited, 4096), limited, nil
}
