package wasmbin

import "fmt"

// Reader reads a byte slice of the binary format. Its first error sticks:
// after it every read returns zero values, and Err reports it.
type Reader struct {
	b   []byte
	pos int
	err error
}

// NewReader returns a Reader at the start of b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err returns the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Fail records an error unless one was recorded already.
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// EOF reports whether the reader met an error or reached the end.
func (r *Reader) EOF() bool { return r.err != nil || r.pos >= len(r.b) }

// Offset returns the offset of the next byte to read.
func (r *Reader) Offset() int { return r.pos }

// Seek moves the reader to offset i.
func (r *Reader) Seek(i int) { r.pos = i }

// Rest returns the bytes not read yet.
func (r *Reader) Rest() []byte { return r.b[min(r.pos, len(r.b)):] }

// Since returns the bytes read from offset start on.
func (r *Reader) Since(start int) []byte { return r.b[start:r.pos] }

// Peek returns the next byte without reading it (0 and false at the end).
func (r *Reader) Peek() (byte, bool) {
	if r.err != nil || r.pos >= len(r.b) {
		return 0, false
	}
	return r.b[r.pos], true
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if r.pos >= len(r.b) {
		r.Fail("unexpected end at offset %d", r.pos)
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

// Bytes reads n bytes.
func (r *Reader) Bytes(n int) []byte {
	if n < 0 || r.pos+n > len(r.b) {
		r.Fail("unexpected end at offset %d", r.pos)
		r.pos = len(r.b)
		return nil
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	return s
}

// U64 reads an unsigned LEB128 of at most 10 bytes.
func (r *Reader) U64() uint64 {
	var v uint64
	for shift := uint(0); shift < 70; shift += 7 {
		c := r.Byte()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.Fail("LEB128 too long at offset %d", r.pos)
	return 0
}

// U32 reads an unsigned LEB128 that must fit 32 bits.
func (r *Reader) U32() uint32 {
	v := r.U64()
	if v > 1<<32-1 {
		r.Fail("u32 out of range at offset %d", r.pos)
	}
	return uint32(v)
}

// S64 reads a signed LEB128 of at most 64 bits (s32, s33 and s64 alike).
func (r *Reader) S64() int64 {
	if r.err != nil {
		return 0
	}
	v, i, err := Int64(r.b, r.pos)
	if err != nil {
		r.Fail("at offset %d: %v", r.pos, err)
		r.pos = len(r.b)
		return 0
	}
	r.pos = i
	return v
}

// SkipLEB skips a signed or unsigned LEB128 of at most 10 bytes.
func (r *Reader) SkipLEB() {
	for i := 0; i < 10; i++ {
		if r.Byte()&0x80 == 0 || r.err != nil {
			return
		}
	}
	r.Fail("LEB128 too long at offset %d", r.pos)
}

// Name reads a name: its length, then its bytes.
func (r *Reader) Name() []byte { return r.Bytes(int(r.U32())) }

// ValType reads a value type; only the single-byte types of WebAssembly 2.0
// are known.
func (r *Reader) ValType() byte {
	t := r.Byte()
	if r.err == nil && !IsValType(t) {
		r.Fail("value type %#x", t)
	}
	return t
}

// Limits skips the limits of a table or memory type.
func (r *Reader) Limits() {
	flags := r.Byte()
	if flags > 0x07 {
		r.Fail("limits flags %#x", flags)
	}
	r.U64()
	if flags&1 != 0 {
		r.U64()
	}
}

// MemArg skips the memory argument of a load or store: its alignment (with
// a memory index when bit 6 is set, for multiple memories) and offset.
func (r *Reader) MemArg() {
	align := r.U32()
	if align&0x40 != 0 {
		r.U32()
	}
	r.U64()
}

// AppendName appends s as a name: its length, then its bytes.
func AppendName(b []byte, s string) []byte {
	return append(AppendUint32(b, uint32(len(s))), s...)
}
