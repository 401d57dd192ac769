package module

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// SchemaOf derives a JSON Schema from a Go type as encoding/json would decode it.
// Struct fields are required unless their json tag has omitempty; unknown members
// are refused. Field tags add constraints:
//
//	desc:"dose per m² of body surface"  description
//	unit:"mg/m²"                        unit of a number ("x-unit", shown by forms and the API docs)
//	example:"60"                        example (JSON)
//	enum:"human|rat|mouse"              allowed string values
//	min:"0" max:"120"                   numeric bounds (inclusive)
//	gt:"0"                              exclusive lower bound (exclusiveMinimum)
//	minlen:"1" maxlen:"2000"            string length or array size bounds
//
// A type with its own UnmarshalJSON (or UnmarshalText) method, an interface
// and a recursive use of a struct accept any value: the method or the handler
// checks them.
func SchemaOf(t reflect.Type) map[string]any { return schemaOf(t, map[reflect.Type]bool{}) }

func schemaOf(t reflect.Type, busy map[reflect.Type]bool) map[string]any {
	if t == nil || t == rawMessageType {
		return map[string]any{}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if pt := reflect.PointerTo(t); pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType) || busy[t] {
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), busy)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), busy)}
	case reflect.Struct:
		busy[t] = true
		defer delete(busy, t)
		return structSchema(t, busy)
	default:
		return map[string]any{}
	}
}

func structSchema(t reflect.Type, busy map[reflect.Type]bool) map[string]any {
	props := map[string]any{}
	required := []string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s := schemaOf(f.Type, busy)
		tagConstraints(s, f.Tag)
		props[name] = s
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			required = append(required, name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func tagConstraints(s map[string]any, tag reflect.StructTag) {
	if v := tag.Get("desc"); v != "" {
		s["description"] = v
	}
	if v := tag.Get("unit"); v != "" {
		s["x-unit"] = v
	}
	if v := tag.Get("example"); v != "" {
		var ex any
		if json.Unmarshal([]byte(v), &ex) != nil {
			ex = v
		}
		s["examples"] = []any{ex}
	}
	if v := tag.Get("enum"); v != "" {
		s["enum"] = strings.Split(v, "|")
	}
	num := func(key, tagKey string) {
		if v := tag.Get(tagKey); v != "" {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				s[key] = f
			}
		}
	}
	num("minimum", "min")
	num("maximum", "max")
	num("exclusiveMinimum", "gt")
	lenKey := func(strKey, arrKey, tagKey string) {
		if v := tag.Get(tagKey); v != "" {
			if n, err := strconv.Atoi(v); err == nil {
				if s["type"] == "array" {
					s[arrKey] = n
				} else {
					s[strKey] = n
				}
			}
		}
	}
	lenKey("minLength", "minItems", "minlen")
	lenKey("maxLength", "maxItems", "maxlen")
}

// jsonType names a Go type the way JSON users know it.
func jsonType(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	if s, ok := SchemaOf(t)["type"].(string); ok {
		return s
	}
	return "value"
}
