package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// A snapshot is the index as bytes, so that a process starts from it
// instead of indexing every document again. Layout (integers as uvarints
// unless said otherwise):
//
//	magic "TXGIDX\x00\x00", version (uint32 LE), meta (bytes)
//	slots: n, then per slot 0 (free) or 1, id, public (0/1), the values of
//	  each text field (count, strings), the values of each sort field
//	weights: n, then each as float64 bits (uint64 LE)
//	tokens: n, then per token its name ("" when free) and, if not free,
//	  its slots (count, ascending as deltas) with a weight code each, and
//	  its wide weights (count, slot, float64 bits)
//	fields: n, then per field its name, its value names ("" when free),
//	  and per slot the ids of its values (count, ids)
//	field tokens: n, then per key the key and its slots (count, deltas)
//	crc32 (Castagnoli, uint32 LE) of everything before
//
// Everything derivable (document frequencies, token ids per document,
// value reference counts, free lists, bitsets, the public bits) is rebuilt
// on reading rather than trusted, and every number read is checked
// against what the bytes can hold, so a damaged or hostile snapshot gives
// an error, never a panic or an index that answers differently.

// SnapshotVersion is the layout version written; a snapshot of another
// version is refused.
const SnapshotVersion = 1

var snapshotMagic = [8]byte{'T', 'X', 'G', 'I', 'D', 'X', 0, 0}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrSnapshot is wrapped by every error of ReadSnapshot about the
// snapshot's bytes (as opposed to the caller's ref function).
var ErrSnapshot = errors.New("search snapshot")

// WriteSnapshot writes the index to w with meta, the caller's note of
// what the index reflects (e.g. the store position). Callers hold the
// index's read lock for the duration.
func (ix *Index) WriteSnapshot(w io.Writer, meta []byte) error {
	e := &snapEnc{w: w, h: crc32.New(crcTable), buf: make([]byte, 0, 1<<17)}
	e.raw(snapshotMagic[:])
	var v [4]byte
	binary.LittleEndian.PutUint32(v[:], SnapshotVersion)
	e.raw(v[:])
	e.bytes(meta)
	e.uint(len(ix.slots))
	for _, d := range ix.slots {
		if d == nil {
			e.uint(0)
			continue
		}
		e.uint(1)
		e.str(d.ID)
		e.bool(d.Public)
		for i := range textFieldNames {
			e.strs(d.textOf(i))
		}
		for i := range sortFields {
			e.str(ix.sortCol[i][d.slot])
		}
	}
	e.uint(len(ix.wtab))
	for _, x := range ix.wtab {
		e.u64(math.Float64bits(x))
	}
	e.uint(len(ix.posts))
	for id, p := range ix.posts {
		if p == nil {
			e.str("")
			continue
		}
		e.str(ix.tokName[id])
		e.uint(p.n())
		prev := int32(-1)
		p.each(func(r int, slot int32) {
			e.uint(int(slot - prev))
			e.uint(int(p.codeAt(r)))
			prev = slot
		})
		wide := p.wide()
		e.uint(len(wide))
		for _, slot := range slices.Sorted(maps.Keys(wide)) {
			e.uint(int(slot))
			e.u64(math.Float64bits(wide[slot]))
		}
	}
	fields := make([]string, len(ix.dicts))
	for f, n := range ix.fieldNum {
		fields[n] = f
	}
	e.uint(len(ix.dicts))
	for n, dc := range ix.dicts {
		e.str(fields[n])
		e.strs(dc.names)
		for slot := range ix.slots {
			ids := dc.slotIDs(int32(slot))
			e.uint(len(ids))
			for _, id := range ids {
				e.uint(int(id))
			}
		}
	}
	e.uint(len(ix.fpost))
	for _, key := range slices.Sorted(maps.Keys(ix.fpost)) {
		e.str(key)
		b := ix.fpost[key]
		e.uint(b.len())
		prev := int32(-1)
		b.each(func(s int32) {
			e.uint(int(s - prev))
			prev = s
		})
	}
	e.flush(0)
	if e.err != nil {
		return fmt.Errorf("write search snapshot: %w", e.err)
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], e.h.Sum32())
	if _, err := w.Write(sum[:]); err != nil {
		return fmt.Errorf("write search snapshot: %w", err)
	}
	return nil
}

// SnapshotMeta returns the meta of a snapshot after checking its magic,
// version and checksum, without decoding the index.
func SnapshotMeta(data []byte) ([]byte, error) {
	d, err := openSnapshot(data)
	if err != nil {
		return nil, err
	}
	return d.meta, nil
}

// ReadSnapshot decodes a snapshot written by WriteSnapshot. ref gives the
// Ref of each document by id; a false answer (a document the caller does
// not hold) fails the read. It returns the index and the meta written.
func ReadSnapshot(data []byte, ref func(id string) (any, bool)) (*Index, []byte, error) {
	s, err := openSnapshot(data)
	if err != nil {
		return nil, nil, err
	}
	ix, err := s.decode(ref)
	if err != nil {
		return nil, nil, err
	}
	return ix, s.meta, nil
}

// snapDec reads a snapshot's body.
type snapDec struct {
	b    []byte
	meta []byte
	err  error
}

func openSnapshot(data []byte) (*snapDec, error) {
	if len(data) < len(snapshotMagic)+4+4 {
		return nil, fmt.Errorf("%w: %d bytes, too short", ErrSnapshot, len(data))
	}
	if [8]byte(data[:8]) != snapshotMagic {
		return nil, fmt.Errorf("%w: not a search snapshot", ErrSnapshot)
	}
	if v := binary.LittleEndian.Uint32(data[8:12]); v != SnapshotVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrSnapshot, v, SnapshotVersion)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, crcTable) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch (damaged or truncated)", ErrSnapshot)
	}
	d := &snapDec{b: body[12:]}
	d.meta = d.bytes()
	if d.err != nil {
		return nil, d.err
	}
	return d, nil
}

func (s *snapDec) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("%w: "+format, append([]any{ErrSnapshot}, args...)...)
	}
}

func (s *snapDec) uint() int {
	if s.err != nil {
		return 0
	}
	v, n := binary.Uvarint(s.b)
	if n <= 0 || v > math.MaxInt32 {
		s.fail("bad number")
		return 0
	}
	s.b = s.b[n:]
	return int(v)
}

// count reads a count of items each taking at least one byte, so that no
// count exceeds what the bytes left can hold.
func (s *snapDec) count() int {
	n := s.uint()
	if n > len(s.b) {
		s.fail("count %d past the end", n)
		return 0
	}
	return n
}

func (s *snapDec) bytes() []byte {
	n := s.count()
	if s.err != nil {
		return nil
	}
	out := s.b[:n:n]
	s.b = s.b[n:]
	return out
}

func (s *snapDec) str() string { return string(s.bytes()) }

func (s *snapDec) strs() []string {
	n := s.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = s.str()
	}
	return out
}

func (s *snapDec) u64() uint64 {
	if s.err != nil {
		return 0
	}
	if len(s.b) < 8 {
		s.fail("truncated")
		return 0
	}
	v := binary.LittleEndian.Uint64(s.b)
	s.b = s.b[8:]
	return v
}

func (s *snapDec) decode(ref func(id string) (any, bool)) (*Index, error) {
	ix := New()
	nSlots := s.count()
	ix.slots = make([]*Doc, nSlots)
	for i := range len(sortFields) {
		ix.sortCol[i] = make([]string, nSlots)
		ix.sortTime[i] = make([]int64, nSlots)
	}
	ix.public = make([]uint64, (nSlots+63)/64)
	for slot := range nSlots {
		for i := range sortFields {
			ix.sortTime[i][slot] = noTime
		}
		switch s.uint() {
		case 0:
			ix.free = append(ix.free, int32(slot))
			continue
		case 1:
		default:
			s.fail("bad slot mark")
		}
		d := &Doc{ID: s.str(), slot: int32(slot), ix: ix}
		switch s.uint() {
		case 0:
		case 1:
			d.Public = true
			ix.public[slot>>6] |= 1 << (slot & 63)
		default:
			s.fail("bad flag")
		}
		var text [len(textFieldNames)][]string
		for i := range textFieldNames {
			text[i] = s.strs()
		}
		d.setText(&text)
		for i := range sortFields {
			v := s.str()
			ix.sortCol[i][slot], ix.sortTime[i][slot] = v, sortTime(v)
		}
		if s.err != nil {
			return nil, s.err
		}
		if ix.docs[d.ID] != nil {
			return nil, fmt.Errorf("%w: document %q twice", ErrSnapshot, d.ID)
		}
		r, ok := ref(d.ID)
		if !ok {
			return nil, fmt.Errorf("search snapshot: document %q is not held", d.ID)
		}
		d.Ref = r
		ix.slots[slot] = d
		ix.docs[d.ID] = d
		ix.newStamp(int32(slot))
		ix.live.Add(uint32(slot))
		if d.Public {
			ix.pubBM.Add(uint32(slot))
		}
	}
	slices.Reverse(ix.free) // the lowest free slot is reused first, as when it was freed last
	nw := s.count()
	for range nw {
		w := math.Float64frombits(s.u64())
		if _, dup := ix.wcode[w]; dup || w != w || len(ix.wtab) >= wideCode {
			s.fail("bad weight table")
			break
		}
		ix.wcode[w] = uint16(len(ix.wtab))
		ix.wtab = append(ix.wtab, w)
	}
	present := func(slot int) bool { return slot >= 0 && slot < nSlots && ix.slots[slot] != nil }
	// the last token id added to each slot's toks (tokens come by id)
	lastTok := make([]int32, nSlots)
	for i := range lastTok {
		lastTok[i] = -1
	}
	nTok := s.count()
	ix.posts = make([]*posting, nTok)
	ix.tokName = make([]string, nTok)
	for id := range nTok {
		name := s.str()
		if name == "" {
			ix.tokFree = append(ix.tokFree, int32(id))
			continue
		}
		if _, dup := ix.tokID[name]; dup {
			s.fail("token %q twice", name)
		}
		p := newPosting()
		n := s.count()
		if n == 0 {
			s.fail("empty posting")
		}
		slot := -1
		slotsBuf := make([]uint32, 0, n)
		codes := make([]uint16, 0, n)
		for range n {
			step := s.uint()
			slot += step
			code := s.uint()
			if s.err != nil {
				break
			}
			if step == 0 || !present(slot) {
				s.fail("posting of %q names slot %d", name, slot)
				break
			}
			if code >= len(ix.wtab) && code != wideCode {
				s.fail("bad weight code")
				break
			}
			slotsBuf = append(slotsBuf, uint32(slot))
			codes = append(codes, uint16(code))
			ix.slots[slot].toks = appendTok(ix.slots[slot].toks, lastTok[slot], int32(id))
			lastTok[slot] = int32(id)
		}
		if s.err != nil {
			return nil, s.err
		}
		p.last = int32(slot)
		p.base = codes[0]
		if len(codes) > 1 {
			p.slots = roaring.New()
			p.slots.AddMany(slotsBuf)
			p.w = codes
			for r, c := range codes {
				p.addCode(c, int32(slotsBuf[r]))
			}
		}
		nWide := s.count()
		for range nWide {
			ws := s.uint()
			w := math.Float64frombits(s.u64())
			x := p.extra()
			if x.wide == nil {
				x.wide = map[int32]float64{}
			}
			x.wide[int32(ws)] = w
		}
		for r, c := range codes {
			if c == wideCode {
				if _, ok := p.wide()[int32(slotsBuf[r])]; !ok {
					s.fail("wide weight missing")
				}
			}
		}
		if len(p.wide()) > 0 && len(p.wide()) != countCode(codes, wideCode) {
			s.fail("wide weights do not match")
		}
		ix.posts[id], ix.tokName[id], ix.tokID[name] = p, name, int32(id)
	}
	if s.err != nil {
		return nil, s.err
	}
	for _, d := range ix.slots {
		if d != nil {
			d.toks = bytes.Clone(d.toks) // no spare capacity
		}
	}
	nFields := s.count()
	for n := range nFields {
		f := s.str()
		if _, dup := ix.fieldNum[f]; dup || TextFields[f] || s.err != nil {
			s.fail("bad field %q", f)
			return nil, s.err
		}
		dc := newDict()
		dc.bitsOn = false // built below, once the values are known
		dc.names = s.strs()
		if len(s.b) < nSlots { // a count per slot follows
			s.fail("field %q truncated", f)
			return nil, s.err
		}
		dc.refs = make([]int32, len(dc.names))
		dc.one = make([]int32, nSlots)
		for slot := range nSlots {
			k := s.count()
			if k > 0 && !present(slot) {
				s.fail("field %q on a free slot", f)
			}
			if s.err != nil {
				return nil, s.err
			}
			var ids []int32
			if k > 0 {
				ids = make([]int32, k)
			}
			for i := range ids {
				id := s.uint()
				if id >= len(dc.names) || slices.Contains(ids[:i], int32(id)) {
					s.fail("field %q: bad value id", f)
					return nil, s.err
				}
				ids[i] = int32(id)
				dc.refs[id]++
				dc.total++
			}
			dc.one[slot] = noValue
			dc.setSlot(int32(slot), ids)
		}
		for id, name := range dc.names {
			if dc.refs[id] == 0 {
				dc.names[id] = ""
				dc.free = append(dc.free, int32(id))
				continue
			}
			if _, dup := dc.ids[name]; dup {
				s.fail("field %q: value %q twice", f, name)
				return nil, s.err
			}
			dc.ids[name] = int32(id)
		}
		slices.Reverse(dc.free)
		if dc.fewValues() {
			dc.rebuildBits()
		}
		ix.fieldNum[f] = n
		ix.dicts = append(ix.dicts, dc)
	}
	nKeys := s.count()
	for range nKeys {
		key := s.str()
		n := s.count()
		if _, dup := ix.fpost[key]; dup || n == 0 {
			s.fail("bad field token %q", key)
		}
		buf := make([]uint32, 0, n)
		slot := -1
		for range n {
			step := s.uint()
			slot += step
			if s.err != nil {
				break
			}
			if step == 0 || !present(slot) {
				s.fail("field token %q names slot %d", key, slot)
				break
			}
			buf = append(buf, uint32(slot))
		}
		if s.err != nil {
			return nil, s.err
		}
		if len(buf) == 1 {
			ix.fpost[key] = slotSet{one: int32(buf[0])}
		} else {
			ix.fpost[key] = slotSet{bm: roaring.BitmapOf(buf...), one: -1}
		}
	}
	if s.err != nil {
		return nil, s.err
	}
	if len(s.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the end", ErrSnapshot, len(s.b))
	}
	return ix, nil
}

func countCode(w []uint16, c uint16) int {
	n := 0
	for _, x := range w {
		if x == c {
			n++
		}
	}
	return n
}

// snapEnc writes a snapshot's parts through a buffer, summing what it
// writes and keeping the first error.
type snapEnc struct {
	w   io.Writer
	h   hash.Hash32
	buf []byte
	err error
}

// flush writes the buffer out when it holds at least atLeast bytes.
func (e *snapEnc) flush(atLeast int) {
	if len(e.buf) < atLeast || e.err != nil {
		return
	}
	_, _ = e.h.Write(e.buf)
	_, e.err = e.w.Write(e.buf)
	e.buf = e.buf[:0]
}

func (e *snapEnc) raw(b []byte) {
	e.buf = append(e.buf, b...)
	e.flush(1 << 16)
}

func (e *snapEnc) uint(v int) {
	e.buf = binary.AppendUvarint(e.buf, uint64(v))
	e.flush(1 << 16)
}

func (e *snapEnc) u64(v uint64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, v)
	e.flush(1 << 16)
}

func (e *snapEnc) bytes(b []byte) {
	e.uint(len(b))
	e.raw(b)
}

func (e *snapEnc) str(s string) {
	e.uint(len(s))
	e.buf = append(e.buf, s...)
	e.flush(1 << 16)
}

func (e *snapEnc) strs(l []string) {
	e.uint(len(l))
	for _, s := range l {
		e.str(s)
	}
}

func (e *snapEnc) bool(b bool) {
	if b {
		e.uint(1)
	} else {
		e.uint(0)
	}
}
