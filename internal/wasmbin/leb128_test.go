package wasmbin

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

// TestKnownEncodings checks encodings from the WebAssembly specification and
// the LEB128 article's examples, and that reading inverts writing.
func TestKnownEncodings(t *testing.T) {
	for _, c := range []struct {
		v    uint32
		want []byte
	}{{0, []byte{0}}, {127, []byte{0x7f}}, {128, []byte{0x80, 0x01}}, {624485, []byte{0xe5, 0x8e, 0x26}},
		{math.MaxUint32, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}}} {
		got := AppendUint32(nil, c.v)
		if !bytes.Equal(got, c.want) {
			t.Errorf("AppendUint32(%d) = % x, want % x", c.v, got, c.want)
		}
		if v, n, err := Uint32(got, 0); err != nil || v != c.v || n != len(got) {
			t.Errorf("Uint32(% x) = %d, %d, %v", got, v, n, err)
		}
	}
	for _, c := range []struct {
		v    int32
		want []byte
	}{{0, []byte{0}}, {63, []byte{0x3f}}, {64, []byte{0xc0, 0x00}}, {-1, []byte{0x7f}}, {-64, []byte{0x40}},
		{-65, []byte{0xbf, 0x7f}}, {-123456, []byte{0xc0, 0xbb, 0x78}}, {math.MinInt32, []byte{0x80, 0x80, 0x80, 0x80, 0x78}}} {
		got := AppendInt32(nil, c.v)
		if !bytes.Equal(got, c.want) {
			t.Errorf("AppendInt32(%d) = % x, want % x", c.v, got, c.want)
		}
		if v, n, err := Int64(got, 0); err != nil || v != int64(c.v) || n != len(got) {
			t.Errorf("Int64(% x) = %d, %d, %v", got, v, n, err)
		}
	}
	for _, v := range []int64{0, 1, -1, 64, -65, 1 << 40, 0x0101010101010101, math.MaxInt64, math.MinInt64} {
		got := AppendInt64(nil, v)
		if v >= math.MinInt32 && v <= math.MaxInt32 && !bytes.Equal(got, AppendInt32(nil, int32(v))) {
			t.Errorf("AppendInt64(%d) = % x, AppendInt32 writes % x", v, got, AppendInt32(nil, int32(v)))
		}
		if r, n, err := Int64(got, 0); err != nil || r != v || n != len(got) {
			t.Errorf("Int64(AppendInt64(%d) = % x) = %d, %d, %v", v, got, r, n, err)
		}
	}
	if v, _, err := Int64([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 0); err != nil || v != -1 {
		t.Errorf("ten-byte -1: %d, %v", v, err)
	}
}

// TestBadInput checks the errors for cut and overlong encodings.
func TestBadInput(t *testing.T) {
	if _, _, err := Uint32([]byte{0x80}, 0); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated: %v", err)
	}
	if _, _, err := Uint32([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 0); !errors.Is(err, ErrTooLong) {
		t.Errorf("too long: %v", err)
	}
	if _, _, err := Int64(nil, 0); !errors.Is(err, ErrTruncated) {
		t.Errorf("empty: %v", err)
	}
	if _, _, err := Int64(bytes.Repeat([]byte{0x80}, 11), 0); !errors.Is(err, ErrTooLong) {
		t.Errorf("too long: %v", err)
	}
}
