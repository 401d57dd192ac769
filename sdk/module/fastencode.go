package module

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unsafe"

	"toxgate/sdk/jsonw"
)

// The fast output encoder: the counterpart of the fast input decoder (see
// fastdecode.go). It writes what encoding/json's Encoder (HTML escaping on)
// writes, byte for byte, for the types it plans: booleans, numbers, strings,
// pointers, slices, arrays, maps with string keys, structs without embedded
// fields and interfaces holding such values. Anything else (a type with its
// own MarshalJSON or MarshalText, a ",string" or "omitzero" tag, a NaN, a
// deep or cyclic value) makes it give up, and encoding/json encodes the whole
// output. FuzzFastEncodeMatchesStd checks the equivalence.

// encPlan appends the value at p to dst; ok is false to give up.
type encPlan func(e *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool)

// fastEncoder carries the nesting depth (encoding/json refuses cycles; the
// fast encoder gives up well before).
type fastEncoder struct{ depth int }

const maxEncodeDepth = 200

var encPlans planCache[encPlan]

// encPlanFor returns the plan for t, or nil when t needs encoding/json.
func encPlanFor(t reflect.Type) encPlan {
	return encPlans.get(t, func(t reflect.Type) (encPlan, bool) {
		b := encBuilder{busy: map[reflect.Type]*encPlan{}}
		return b.plan(t), !b.unsupported
	})
}

// fastEncode appends v's JSON to dst; ok is false when encoding/json must do it.
func fastEncode(dst []byte, v any) ([]byte, bool) {
	if v == nil {
		return append(dst, "null"...), true
	}
	t := reflect.TypeOf(v)
	plan := encPlanFor(t)
	if plan == nil {
		return dst, false
	}
	// The value in an interface is addressable through a copy.
	pv := reflect.New(t)
	pv.Elem().Set(reflect.ValueOf(v))
	var e fastEncoder
	return plan(&e, dst, pv.UnsafePointer())
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

type encBuilder struct {
	busy        map[reflect.Type]*encPlan
	unsupported bool
}

func (b *encBuilder) no() encPlan { b.unsupported = true; return nil }

func (b *encBuilder) plan(t reflect.Type) encPlan {
	if p, ok := b.busy[t]; ok {
		return func(e *fastEncoder, dst []byte, ptr unsafe.Pointer) ([]byte, bool) { return (*p)(e, dst, ptr) }
	}
	slot := new(encPlan)
	b.busy[t] = slot
	*slot = b.build(t)
	return *slot
}

func (b *encBuilder) build(t reflect.Type) encPlan {
	if t == numberType {
		return b.no() // written unquoted, after a validity check
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return b.no()
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return strconv.AppendBool(dst, *(*bool)(p)), true
		}
	case reflect.Int:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return strconv.AppendInt(dst, int64(*(*int)(p)), 10), true
		}
	case reflect.Int8:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return strconv.AppendInt(dst, int64(*(*int8)(p)), 10), true
		}
	case reflect.Int16:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return strconv.AppendInt(dst, int64(*(*int16)(p)), 10), true
		}
	case reflect.Int32:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return strconv.AppendInt(dst, int64(*(*int32)(p)), 10), true
		}
	case reflect.Int64:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return strconv.AppendInt(dst, *(*int64)(p), 10), true
		}
	case reflect.Uint, reflect.Uintptr:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return strconv.AppendUint(dst, uint64(*(*uint)(p)), 10), true
		}
	case reflect.Uint8:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return strconv.AppendUint(dst, uint64(*(*uint8)(p)), 10), true
		}
	case reflect.Uint16:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return strconv.AppendUint(dst, uint64(*(*uint16)(p)), 10), true
		}
	case reflect.Uint32:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return strconv.AppendUint(dst, uint64(*(*uint32)(p)), 10), true
		}
	case reflect.Uint64:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return strconv.AppendUint(dst, *(*uint64)(p), 10), true
		}
	case reflect.Float32:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return appendFloat(dst, float64(*(*float32)(p)), 32)
		}
	case reflect.Float64:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return appendFloat(dst, *(*float64)(p), 64)
		}
	case reflect.String:
		return func(_ *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			return jsonw.AppendString(dst, *(*string)(p)), true
		}
	case reflect.Interface:
		return encodeInterface(t)
	case reflect.Pointer:
		inner := b.plan(t.Elem())
		return func(e *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
			q := *(*unsafe.Pointer)(p)
			if q == nil {
				return append(dst, "null"...), true
			}
			return e.nested(dst, q, inner)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return b.no() // base64
		}
		return b.slicePlan(t)
	case reflect.Array:
		return b.arrayPlan(t)
	case reflect.Map:
		return b.mapPlan(t)
	case reflect.Struct:
		return b.structPlan(t)
	}
	return b.no()
}

// nested encodes the value at p with plan one level deeper.
func (e *fastEncoder) nested(dst []byte, p unsafe.Pointer, plan encPlan) ([]byte, bool) {
	if e.depth++; e.depth > maxEncodeDepth {
		return dst, false
	}
	dst, ok := plan(e, dst, p)
	e.depth--
	return dst, ok
}

// appendFloat writes f as encoding/json does; it gives up on NaN and ±Inf,
// which encoding/json refuses with its own error.
func appendFloat(dst []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	return jsonw.AppendFloat(dst, f, bits), true
}

// encodeInterface encodes the dynamic value with its own plan.
func encodeInterface(t reflect.Type) encPlan {
	return func(e *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
		v := reflect.NewAt(t, p).Elem()
		if v.IsNil() {
			return append(dst, "null"...), true
		}
		inner := v.Elem()
		plan := encPlanFor(inner.Type())
		if plan == nil {
			return dst, false
		}
		c := reflect.New(inner.Type())
		c.Elem().Set(inner)
		return e.nested(dst, c.UnsafePointer(), plan)
	}
}

func (b *encBuilder) slicePlan(t reflect.Type) encPlan {
	inner := b.plan(t.Elem())
	size := t.Elem().Size()
	return func(e *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
		h := (*sliceHeader)(p)
		if h.data == nil {
			return append(dst, "null"...), true
		}
		return e.elements(dst, h.data, h.len, size, inner)
	}
}

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func (b *encBuilder) arrayPlan(t reflect.Type) encPlan {
	inner := b.plan(t.Elem())
	size, n := t.Elem().Size(), t.Len()
	return func(e *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
		return e.elements(dst, p, n, size, inner)
	}
}

// elements writes n elements of the given size from data as a JSON array.
func (e *fastEncoder) elements(dst []byte, data unsafe.Pointer, n int, size uintptr, plan encPlan) ([]byte, bool) {
	if e.depth++; e.depth > maxEncodeDepth {
		return dst, false
	}
	dst = append(dst, '[')
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = plan(e, dst, unsafe.Add(data, uintptr(i)*size)); !ok {
			return dst, false
		}
	}
	e.depth--
	return append(dst, ']'), true
}

func (b *encBuilder) mapPlan(t reflect.Type) encPlan {
	if t.Key().Kind() != reflect.String {
		return b.no()
	}
	inner := b.plan(t.Elem())
	return func(e *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
		m := reflect.NewAt(t, p).Elem()
		if m.IsNil() {
			return append(dst, "null"...), true
		}
		if e.depth++; e.depth > maxEncodeDepth {
			return dst, false
		}
		keys := make([]string, 0, m.Len())
		vals := make(map[string]reflect.Value, m.Len())
		for it := m.MapRange(); it.Next(); {
			k := it.Key().String()
			keys = append(keys, k)
			vals[k] = it.Value()
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		v := reflect.New(t.Elem())
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(jsonw.AppendString(dst, k), ':')
			v.Elem().Set(vals[k])
			var ok bool
			if dst, ok = inner(e, dst, v.UnsafePointer()); !ok {
				return dst, false
			}
		}
		e.depth--
		return append(dst, '}'), true
	}
}

type encField struct {
	key       []byte // "name":
	offset    uintptr
	omitEmpty bool
	kind      reflect.Kind
	typ       reflect.Type
	plan      encPlan
}

func (b *encBuilder) structPlan(t reflect.Type) encPlan {
	var fields []encField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return b.no()
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := cutComma(tag)
		omitEmpty := false
		for opts != "" {
			var o string
			o, opts, _ = cutComma(opts)
			if o != "omitempty" {
				return b.no() // ",string", "omitzero"
			}
			omitEmpty = true
		}
		if name == "" {
			name = f.Name
		} else if !plainName(name) {
			return b.no()
		}
		for _, g := range fields {
			if string(g.key) == string(jsonw.AppendString(nil, name))+":" {
				return b.no() // dominance rules
			}
		}
		fields = append(fields, encField{key: append(jsonw.AppendString(nil, name), ':'), offset: f.Offset,
			omitEmpty: omitEmpty, kind: f.Type.Kind(), typ: f.Type, plan: b.plan(f.Type)})
	}
	return func(e *fastEncoder, dst []byte, p unsafe.Pointer) ([]byte, bool) {
		if e.depth++; e.depth > maxEncodeDepth {
			return dst, false
		}
		dst = append(dst, '{')
		first := true
		for i := range fields {
			f := &fields[i]
			fp := unsafe.Add(p, f.offset)
			if f.omitEmpty && isEmpty(f.kind, f.typ, fp) {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, f.key...)
			var ok bool
			if dst, ok = f.plan(e, dst, fp); !ok {
				return dst, false
			}
		}
		e.depth--
		return append(dst, '}'), true
	}
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(k reflect.Kind, t reflect.Type, p unsafe.Pointer) bool {
	switch k {
	case reflect.Bool:
		return !*(*bool)(p)
	case reflect.String:
		return *(*string)(p) == ""
	case reflect.Float64:
		return *(*float64)(p) == 0
	case reflect.Int:
		return *(*int)(p) == 0
	case reflect.Pointer:
		return *(*unsafe.Pointer)(p) == nil
	case reflect.Slice:
		return (*sliceHeader)(p).len == 0
	case reflect.Array, reflect.Map:
		return reflect.NewAt(t, p).Elem().Len() == 0
	case reflect.Struct:
		return false
	}
	return reflect.NewAt(t, p).Elem().IsZero()
}
