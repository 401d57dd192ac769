package datastore

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// A gzip stream expands to at most maxInflate times the file limit: a
// small file of zeros that would expand to a megabyte stops at the bound.
func TestGunzipIsBounded(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(make([]byte, 1<<20))
	_ = zw.Close()
	br := bufio.NewReader(bytes.NewReader(gz.Bytes()))
	if !isGzip(br) {
		t.Fatal("not taken for gzip")
	}
	const limit = 1000
	text, limited, err := gunzip(br, limit)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, text)
	if n != maxInflate*limit+1 || limited.N > 0 {
		t.Fatalf("read %d bytes (limit left %d), want %d and none", n, limited.N, maxInflate*limit+1)
	}
	if isGzip(bufio.NewReader(bytes.NewReader([]byte("a,b\n1,2\n")))) {
		t.Fatal("plain CSV taken for gzip")
	}
	if _, _, err := gunzip(bufio.NewReader(bytes.NewReader([]byte{0x1f, 0x8b, 0})), limit); err == nil {
		t.Fatal("a cut gzip header read")
	}
}
