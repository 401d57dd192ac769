package module

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The fast input decoder.
//
// Inside a wasm module, encoding/json costs ~15 µs to decode a four-field
// object: its scanner makes an indirect call per byte, which Go's wasm backend
// makes expensive, and it walks the type by reflection on every call. The
// fast decoder builds a plan per type once (when the handler is registered)
// and then writes fields through their offsets. It is several times faster
// there and adds little to a module; why it, and not a faster JSON library:
// sdk/RATIONALE.md.
//
// It only ever succeeds on input that encoding/json also accepts, with the
// same result: anything else (a syntax error, a type mismatch, an unknown or
// repeated field, a null given to an UnmarshalJSON method, a type it does not
// plan for) makes it give up, and the caller decodes again with
// encoding/json, whose value or error is the answer. FuzzFastDecodeMatchesStd
// checks that equivalence.

// decPlan decodes the JSON value at d's position into the value at p and
// reports whether it did so exactly as encoding/json would.
type decPlan func(d *fastDecoder, p unsafe.Pointer) bool

// fastDecoder is a position in a complete JSON document.
type fastDecoder struct {
	b []byte
	i int
}

var decPlans planCache[decPlan]

// planFor returns the plan for t, or nil when t needs encoding/json.
func planFor(t reflect.Type) decPlan {
	return decPlans.get(t, func(t reflect.Type) (decPlan, bool) {
		b := planBuilder{busy: map[reflect.Type]*decPlan{}}
		return b.plan(t), !b.unsupported
	})
}

// planCache keeps the plan (decPlan or encPlan) built once per type; a type
// that needs encoding/json is kept as the zero (nil) plan.
type planCache[P any] struct{ m sync.Map }

// get returns the plan for t, building it with build the first time.
func (c *planCache[P]) get(t reflect.Type, build func(reflect.Type) (P, bool)) P {
	if p, ok := c.m.Load(t); ok {
		return p.(P)
	}
	p, ok := build(t)
	if !ok {
		var none P
		p = none
	}
	c.m.Store(t, p)
	return p
}

// fastDecode decodes input into v (a non-nil pointer whose value is zero)
// with plan and reports whether it succeeded.
func fastDecode(plan decPlan, input []byte, v any) bool {
	d := fastDecoder{b: input}
	d.space()
	if !plan(&d, reflect.ValueOf(v).UnsafePointer()) {
		return false
	}
	d.space()
	return d.i == len(d.b)
}

var (
	numberType          = reflect.TypeFor[json.Number]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

type planBuilder struct {
	busy        map[reflect.Type]*decPlan // types being planned (recursive types)
	unsupported bool
}

func (b *planBuilder) no() decPlan { b.unsupported = true; return nil }

func (b *planBuilder) plan(t reflect.Type) decPlan {
	if p, ok := b.busy[t]; ok { // a recursive type: call the plan once it is built
		return func(d *fastDecoder, ptr unsafe.Pointer) bool { return (*p)(d, ptr) }
	}
	slot := new(decPlan)
	b.busy[t] = slot
	*slot = b.build(t)
	return *slot
}

func (b *planBuilder) build(t reflect.Type) decPlan {
	if t == numberType {
		return b.no() // a number, or a string that must hold one
	}
	pt := reflect.PointerTo(t)
	switch {
	case pt.Implements(unmarshalerType):
		return unmarshalerPlan(t)
	case pt.Implements(textUnmarshalerType):
		return textUnmarshalerPlan(t)
	}
	switch t.Kind() {
	case reflect.Bool:
		return decodeBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intPlan(t)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintPlan(t)
	case reflect.Float32:
		return decodeFloat32
	case reflect.Float64:
		return decodeFloat64
	case reflect.String:
		return decodeString
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return b.no()
		}
		return decodeAny
	case reflect.Pointer:
		return b.pointerPlan(t)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(unmarshalerType) &&
			!reflect.PointerTo(t.Elem()).Implements(textUnmarshalerType) {
			return b.no() // base64 strings
		}
		return b.slicePlan(t)
	case reflect.Map:
		return b.mapPlan(t)
	case reflect.Struct:
		return b.structPlan(t)
	}
	return b.no()
}

// space skips JSON white space.
func (d *fastDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte (0 at the end).
func (d *fastDecoder) peek() byte {
	d.space()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// literal consumes lit if it is next.
func (d *fastDecoder) literal(lit string) bool {
	if len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
		d.i += len(lit)
		return true
	}
	return false
}

// null consumes a null literal if it is next.
func (d *fastDecoder) null() bool { return d.peek() == 'n' && d.literal("null") }

// number consumes a JSON number and returns its text.
func (d *fastDecoder) number() ([]byte, bool) {
	d.space()
	s, i := d.i, d.i
	if i < len(d.b) && d.b[i] == '-' {
		i++
	}
	switch {
	case i < len(d.b) && d.b[i] == '0':
		i++
	case i < len(d.b) && d.b[i] >= '1' && d.b[i] <= '9':
		for i < len(d.b) && d.b[i] >= '0' && d.b[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(d.b) && d.b[i] == '.' {
		i++
		j := i
		for i < len(d.b) && d.b[i] >= '0' && d.b[i] <= '9' {
			i++
		}
		if i == j {
			return nil, false
		}
	}
	if i < len(d.b) && (d.b[i] == 'e' || d.b[i] == 'E') {
		i++
		if i < len(d.b) && (d.b[i] == '+' || d.b[i] == '-') {
			i++
		}
		j := i
		for i < len(d.b) && d.b[i] >= '0' && d.b[i] <= '9' {
			i++
		}
		if i == j {
			return nil, false
		}
	}
	d.i = i
	return d.b[s:i], true
}

// str consumes a JSON string and returns its decoded bytes, which alias the
// input when it has no escapes. It gives up on what encoding/json would
// repair (invalid UTF-8, lone surrogates).
func (d *fastDecoder) str() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	i := d.i + 1
	s, ascii := i, true
	for i < len(d.b) {
		c := d.b[i]
		switch {
		case c == '"':
			if !ascii && !utf8.Valid(d.b[s:i]) {
				return nil, false
			}
			d.i = i + 1
			return d.b[s:i], true
		case c == '\\':
			return d.escaped(s)
		case c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
		i++
	}
	return nil, false
}

// escaped decodes a string with escapes that starts at s.
func (d *fastDecoder) escaped(s int) ([]byte, bool) {
	out := make([]byte, 0, 32)
	i := s
	for i < len(d.b) {
		c := d.b[i]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return nil, false
			}
			d.i = i + 1
			return out, true
		case c < 0x20:
			return nil, false
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(d.b) {
			return nil, false
		}
		switch e := d.b[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(d.b, i+2)
			if !ok {
				return nil, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), i+1 < len(d.b) && d.b[i] == '\\' && d.b[i+1] == 'u'
				if ok {
					r2, ok = hex4(d.b, i+2)
				}
				if r = utf16.DecodeRune(r, r2); !ok || r == utf8.RuneError {
					return nil, false // a lone surrogate: encoding/json writes U+FFFD
				}
				i += 6
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return nil, false
		}
		i += 2
	}
	return nil, false
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// key consumes an object member's name and the colon after it.
func (d *fastDecoder) key() ([]byte, bool) {
	k, ok := d.str()
	if !ok || d.peek() != ':' {
		return nil, false
	}
	d.i++
	return k, true
}

// more consumes what follows a member or an element: a comma (more to
// come), or closing (done); anything else is not ok.
func (d *fastDecoder) more(closing byte) (done, ok bool) {
	switch d.peek() {
	case ',':
		d.i++
		return false, true
	case closing:
		d.i++
		return true, true
	}
	return false, false
}

// skip consumes any one JSON value.
func (d *fastDecoder) skip() bool {
	switch d.peek() {
	case '"':
		_, ok := d.str()
		return ok
	case '{':
		d.i++
		if d.peek() == '}' {
			d.i++
			return true
		}
		for {
			if _, ok := d.key(); !ok {
				return false
			}
			if !d.skip() {
				return false
			}
			if done, ok := d.more('}'); !ok {
				return false
			} else if done {
				return true
			}
		}
	case '[':
		d.i++
		if d.peek() == ']' {
			d.i++
			return true
		}
		for {
			if !d.skip() {
				return false
			}
			if done, ok := d.more(']'); !ok {
				return false
			} else if done {
				return true
			}
		}
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	_, ok := d.number()
	return ok
}

func decodeBool(d *fastDecoder, p unsafe.Pointer) bool {
	switch d.peek() {
	case 't':
		if d.literal("true") {
			*(*bool)(p) = true
			return true
		}
	case 'f':
		if d.literal("false") {
			*(*bool)(p) = false
			return true
		}
	case 'n':
		return d.literal("null")
	}
	return false
}

func intPlan(t reflect.Type) decPlan  { return integerPlan(t.Bits(), strconv.ParseInt) }
func uintPlan(t reflect.Type) decPlan { return integerPlan(t.Bits(), strconv.ParseUint) }

// integerPlan decodes a JSON integer with parse at the type's size (which
// refuses fractions, exponents and overflow, as encoding/json does) and
// stores its low bits, the same for signed and unsigned types.
func integerPlan[N int64 | uint64](bits int, parse func(string, int, int) (N, error)) decPlan {
	return func(d *fastDecoder, p unsafe.Pointer) bool {
		if d.null() {
			return true
		}
		s, ok := d.number()
		if !ok {
			return false
		}
		n, err := parse(unsafe.String(unsafe.SliceData(s), len(s)), 10, bits)
		if err != nil {
			return false
		}
		switch bits {
		case 8:
			*(*uint8)(p) = uint8(n)
		case 16:
			*(*uint16)(p) = uint16(n)
		case 32:
			*(*uint32)(p) = uint32(n)
		default:
			*(*uint64)(p) = uint64(n)
		}
		return true
	}
}

func parseFloat(d *fastDecoder, bits int) (float64, bool) {
	s, ok := d.number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(s), len(s)), bits)
	return f, err == nil
}

var (
	decodeFloat64 = floatPlan[float64](64)
	decodeFloat32 = floatPlan[float32](32)
)

// floatPlan decodes a JSON number parsed at the given size (out of range is
// encoding/json's error to give).
func floatPlan[F float32 | float64](bits int) decPlan {
	return func(d *fastDecoder, p unsafe.Pointer) bool {
		if d.null() {
			return true
		}
		f, ok := parseFloat(d, bits)
		if ok {
			*(*F)(p) = F(f)
		}
		return ok
	}
}

func decodeString(d *fastDecoder, p unsafe.Pointer) bool {
	if d.null() {
		return true
	}
	s, ok := d.str()
	if ok {
		*(*string)(p) = string(s) // a copy: the input buffer is reused
	}
	return ok
}

// decodeAny decodes into an empty interface as encoding/json does: objects
// as map[string]any, arrays as []any, numbers as float64.
func decodeAny(d *fastDecoder, p unsafe.Pointer) bool {
	v, ok := d.anyValue()
	if ok {
		*(*any)(p) = v
	}
	return ok
}

func (d *fastDecoder) anyValue() (any, bool) {
	switch d.peek() {
	case '"':
		s, ok := d.str()
		return string(s), ok
	case '{':
		d.i++
		m := map[string]any{}
		if d.peek() == '}' {
			d.i++
			return m, true
		}
		for {
			k, ok := d.key()
			if !ok {
				return nil, false
			}
			v, ok := d.anyValue()
			if !ok {
				return nil, false
			}
			m[string(k)] = v
			if done, ok := d.more('}'); !ok {
				return nil, false
			} else if done {
				return m, true
			}
		}
	case '[':
		d.i++
		a := []any{}
		if d.peek() == ']' {
			d.i++
			return a, true
		}
		for {
			v, ok := d.anyValue()
			if !ok {
				return nil, false
			}
			a = append(a, v)
			if done, ok := d.more(']'); !ok {
				return nil, false
			} else if done {
				return a, true
			}
		}
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	}
	return parseFloat(d, 64)
}

// unmarshalerPlan hands the raw value to the type's UnmarshalJSON, as
// encoding/json does; a null goes to encoding/json, whose rules for it
// depend on the type.
func unmarshalerPlan(t reflect.Type) decPlan {
	return func(d *fastDecoder, p unsafe.Pointer) bool {
		if d.peek() == 'n' {
			return false
		}
		s := d.i
		if !d.skip() {
			return false
		}
		u := reflect.NewAt(t, p).Interface().(json.Unmarshaler)
		return u.UnmarshalJSON(d.b[s:d.i]) == nil
	}
}

// textUnmarshalerPlan hands a string to the type's UnmarshalText.
func textUnmarshalerPlan(t reflect.Type) decPlan {
	return func(d *fastDecoder, p unsafe.Pointer) bool {
		if d.peek() != '"' {
			return false
		}
		s, ok := d.str()
		if !ok {
			return false
		}
		u := reflect.NewAt(t, p).Interface().(encoding.TextUnmarshaler)
		return u.UnmarshalText(bytes.Clone(s)) == nil
	}
}

func (b *planBuilder) pointerPlan(t reflect.Type) decPlan {
	elem := t.Elem()
	inner := b.plan(elem)
	return func(d *fastDecoder, p unsafe.Pointer) bool {
		pp := (*unsafe.Pointer)(p)
		if d.null() {
			*pp = nil
			return true
		}
		if *pp == nil {
			*pp = reflect.New(elem).UnsafePointer()
		}
		return inner(d, *pp)
	}
}

func (b *planBuilder) slicePlan(t reflect.Type) decPlan {
	inner := b.plan(t.Elem())
	return func(d *fastDecoder, p unsafe.Pointer) bool {
		dst := reflect.NewAt(t, p).Elem()
		if d.null() {
			dst.SetZero()
			return true
		}
		if d.peek() != '[' {
			return false
		}
		d.i++
		s := reflect.New(t).Elem() // addressable, so that it can grow
		s.Set(reflect.MakeSlice(t, 0, 4))
		if d.peek() == ']' {
			d.i++
			dst.Set(s) // empty, not nil, as encoding/json
			return true
		}
		for n := 0; ; n++ {
			if n == s.Cap() {
				s.Grow(1)
			}
			s.SetLen(n + 1)
			if !inner(d, s.Index(n).Addr().UnsafePointer()) {
				return false
			}
			switch d.peek() {
			case ',':
				d.i++
			case ']':
				d.i++
				dst.Set(s)
				return true
			default:
				return false
			}
		}
	}
}

func (b *planBuilder) mapPlan(t reflect.Type) decPlan {
	if t.Key().Kind() != reflect.String || reflect.PointerTo(t.Key()).Implements(textUnmarshalerType) {
		return b.no()
	}
	elem := t.Elem()
	inner := b.plan(elem)
	return func(d *fastDecoder, p unsafe.Pointer) bool {
		m := reflect.NewAt(t, p).Elem()
		if d.null() {
			m.SetZero()
			return true
		}
		if d.peek() != '{' {
			return false
		}
		d.i++
		if m.IsNil() {
			m.Set(reflect.MakeMap(t))
		}
		if d.peek() == '}' {
			d.i++
			return true
		}
		for {
			k, ok := d.key()
			if !ok {
				return false
			}
			v := reflect.New(elem)
			if !inner(d, v.UnsafePointer()) {
				return false
			}
			m.SetMapIndex(reflect.ValueOf(string(k)).Convert(t.Key()), v.Elem())
			if done, ok := d.more('}'); !ok {
				return false
			} else if done {
				return true
			}
		}
	}
}

type fieldPlan struct {
	name   string
	offset uintptr
	plan   decPlan
}

func (b *planBuilder) structPlan(t reflect.Type) decPlan {
	var fields []fieldPlan
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return b.no() // promoted fields: encoding/json's rules
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := cutComma(tag)
		if opts != "" && !plainOptions(opts) {
			return b.no() // ",string" and the like
		}
		if name == "" {
			name = f.Name
		} else if !plainName(name) {
			return b.no()
		}
		fields = append(fields, fieldPlan{name: name, offset: f.Offset, plan: b.plan(f.Type)})
	}
	if len(fields) > 64 {
		return b.no()
	}
	for i := range fields {
		for j := range i {
			if fields[i].name == fields[j].name {
				return b.no() // encoding/json's dominance rules
			}
		}
	}
	return func(d *fastDecoder, p unsafe.Pointer) bool {
		if d.null() {
			return true
		}
		if d.peek() != '{' {
			return false
		}
		d.i++
		if d.peek() == '}' {
			d.i++
			return true
		}
		var seen uint64
		for {
			k, ok := d.key()
			if !ok {
				return false
			}
			j := findField(fields, k)
			if j < 0 || seen&(1<<j) != 0 {
				return false // unknown (refused) or repeated (merged by encoding/json)
			}
			seen |= 1 << j
			if !fields[j].plan(d, unsafe.Add(p, fields[j].offset)) {
				return false
			}
			if done, ok := d.more('}'); !ok {
				return false
			} else if done {
				return true
			}
		}
	}
}

// findField finds key among fields as encoding/json does: an exact match
// first, then one that differs in case only.
func findField(fields []fieldPlan, key []byte) int {
	for j := range fields {
		if fields[j].name == string(key) {
			return j
		}
	}
	for j := range fields {
		if bytes.EqualFold([]byte(fields[j].name), key) {
			return j
		}
	}
	return -1
}

func cutComma(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == ',' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// plainOptions reports whether a tag's options only concern encoding.
func plainOptions(opts string) bool {
	for opts != "" {
		var o string
		o, opts, _ = cutComma(opts)
		if o != "omitempty" && o != "omitzero" {
			return false
		}
	}
	return true
}

// plainName reports whether a tag name is one encoding/json takes as is.
func plainName(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/') {
			return false
		}
	}
	return true
}
