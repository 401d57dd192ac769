package contract

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// errShort reports a truncated message.
var errShort = errors.New("contract: message truncated")

type enc struct{ b []byte }

func (e *enc) uint(v uint64)   { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) int(v int64)     { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) bytes(v []byte)  { e.uint(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) string(v string) { e.uint(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) raw() []byte {
	n := d.uint()
	if d.err != nil {
		return nil
	}
	if uint64(len(d.b)) < n {
		d.err = errShort
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) bytes() []byte {
	v := d.raw()
	if v == nil {
		return nil
	}
	return append([]byte(nil), v...)
}

func (d *dec) string() string { return string(d.raw()) }

func (d *dec) bool() bool {
	if d.err != nil {
		return false
	}
	if len(d.b) < 1 {
		d.err = errShort
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

// MarshalBinary encodes the request.
func (r *Request) MarshalBinary() ([]byte, error) {
	e := enc{b: make([]byte, 0, 64+len(r.Body)+len(r.Query)+len(r.Action)+len(r.SiteURL))}
	e.string(r.Action)
	e.string(r.Method)
	e.string(r.ContentType)
	e.string(r.Query)
	e.bytes(r.Body)
	e.string(r.SiteURL)
	e.string(r.Caller.UserID)
	e.string(r.Caller.Name)
	e.bool(r.Caller.Sysadmin)
	var dl int64
	if !r.Deadline.IsZero() {
		dl = r.Deadline.UnixNano()
	}
	e.int(dl)
	e.bool(r.Upload != nil)
	if u := r.Upload; u != nil {
		e.string(u.FileID)
		e.string(u.Filename)
		e.string(u.Mimetype)
		e.int(u.Size)
		e.string(u.SHA256)
	}
	// last, so that a message without it (from an older gateway) decodes
	e.int(r.Arrived)
	return e.b, nil
}

// UnmarshalBinary decodes the request.
func (r *Request) UnmarshalBinary(b []byte) error {
	d := dec{b: b}
	r.Action = d.string()
	r.Method = d.string()
	r.ContentType = d.string()
	r.Query = d.string()
	r.Body = d.bytes()
	r.SiteURL = d.string()
	r.Caller.UserID = d.string()
	r.Caller.Name = d.string()
	r.Caller.Sysadmin = d.bool()
	if dl := d.int(); dl != 0 {
		r.Deadline = time.Unix(0, dl)
	} else {
		r.Deadline = time.Time{}
	}
	r.Upload = nil
	if d.bool() {
		r.Upload = &Upload{FileID: d.string(), Filename: d.string(), Mimetype: d.string(), Size: d.int(), SHA256: d.string()}
	}
	r.Arrived = 0
	if d.err == nil && len(d.b) > 0 {
		r.Arrived = d.int()
	}
	if d.err != nil {
		return fmt.Errorf("decode request: %w", d.err)
	}
	return nil
}

// MarshalBinary encodes the response.
func (r *Response) MarshalBinary() ([]byte, error) {
	e := enc{b: make([]byte, 0, 32+len(r.Body)+len(r.ContentType))}
	e.int(int64(r.Status))
	e.string(r.ContentType)
	e.bytes(r.Body)
	e.string(r.ErrorType)
	return e.b, nil
}

// UnmarshalBinary decodes the response.
func (r *Response) UnmarshalBinary(b []byte) error {
	d := dec{b: b}
	r.Status = int(d.int())
	r.ContentType = d.string()
	r.Body = d.bytes()
	r.ErrorType = d.string()
	if d.err != nil {
		return fmt.Errorf("decode response: %w", d.err)
	}
	return nil
}

// MarshalBinary encodes the manifest.
func (m *Manifest) MarshalBinary() ([]byte, error) {
	var e enc
	e.string(m.Name)
	e.string(m.Version)
	e.uint(uint64(len(m.Actions)))
	for _, a := range m.Actions {
		e.string(a.Name)
		e.bool(a.GET)
		e.string(a.Description)
		e.bool(a.Internal)
	}
	return e.b, nil
}

// UnmarshalBinary decodes the manifest.
func (m *Manifest) UnmarshalBinary(b []byte) error {
	d := dec{b: b}
	m.Name = d.string()
	m.Version = d.string()
	n := d.uint()
	if n > uint64(len(b)) {
		return fmt.Errorf("decode manifest: %w", errShort)
	}
	m.Actions = make([]ActionSpec, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		m.Actions = append(m.Actions, ActionSpec{Name: d.string(), GET: d.bool(), Description: d.string(), Internal: d.bool()})
	}
	if d.err != nil {
		return fmt.Errorf("decode manifest: %w", d.err)
	}
	return nil
}

// Empty is the argument of Describe.
type Empty struct{}

// MarshalBinary encodes nothing.
func (*Empty) MarshalBinary() ([]byte, error) { return nil, nil }

// UnmarshalBinary decodes nothing.
func (*Empty) UnmarshalBinary([]byte) error { return nil }
