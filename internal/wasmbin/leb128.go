package wasmbin

// LEB128 integers (core specification 5.2.2).

import "errors"

// ErrTruncated is returned for an integer cut short by the end of the input.
var ErrTruncated = errors.New("leb128: truncated")

// ErrTooLong is returned for an encoding longer than its type allows.
var ErrTooLong = errors.New("leb128: too long")

// AppendUint32 appends v in unsigned LEB128.
func AppendUint32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// AppendInt32 appends v in signed LEB128.
func AppendInt32(b []byte, v int32) []byte { return AppendInt64(b, int64(v)) }

// AppendInt64 appends v in signed LEB128.
func AppendInt64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// Uint32 reads an unsigned LEB128 value of at most 32 bits at b[i:] and
// returns it with the index after it.
func Uint32(b []byte, i int) (uint32, int, error) {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		if i >= len(b) {
			return 0, 0, ErrTruncated
		}
		c := b[i]
		i++
		v |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return v, i, nil
		}
	}
	return 0, 0, ErrTooLong
}

// Int64 reads a signed LEB128 value of at most 64 bits at b[i:] and returns
// it with the index after it.
func Int64(b []byte, i int) (int64, int, error) {
	var v int64
	for shift := 0; ; shift += 7 {
		if i >= len(b) {
			return 0, 0, ErrTruncated
		}
		if shift >= 70 {
			return 0, 0, ErrTooLong
		}
		c := b[i]
		i++
		v |= int64(c&0x7f) << shift
		if c < 0x80 {
			if shift+7 < 64 && c&0x40 != 0 {
				v |= -1 << (shift + 7)
			}
			return v, i, nil
		}
	}
}
