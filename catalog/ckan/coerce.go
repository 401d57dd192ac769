package ckan

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Coercion messages, as CKAN's validators word them.
const (
	MsgInvalidInteger = "Invalid integer"
	MsgNotNatural     = "Must be a natural number"
	MsgMissing        = "Missing value"
)

// AsBool converts v as CKAN's asbool does: booleans, numbers, and the
// case-insensitive strings true/yes/on/y/t/1 and false/no/off/n/f/0. Other
// strings report ok=false.
func AsBool(v any) (value, ok bool) {
	switch x := v.(type) {
	case nil:
		return false, true
	case bool:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f != 0, err == nil
	case float64:
		return x != 0, true
	case int:
		return x != 0, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "on", "y", "t", "1":
			return true, true
		case "false", "no", "off", "n", "f", "0", "":
			return false, true
		}
	}
	return false, false
}

// SchemaBool converts v as CKAN's boolean_validator does: only true, yes, t,
// y and 1 (and JSON true or non-zero numbers) are true.
func SchemaBool(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case json.Number:
		f, _ := x.Float64()
		return f != 0
	case float64:
		return x != 0
	case int:
		return x != 0
	case string:
		switch strings.ToLower(x) {
		case "true", "yes", "t", "y", "1":
			return true
		}
	}
	return false
}

// AsInt converts v as CKAN's int_validator does. The error text is the
// validation message ("Invalid integer").
func AsInt(v any) (int, string) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.Atoi(x.String()); err == nil {
			return i, ""
		}
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int(f), ""
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x), ""
		}
	case int:
		return x, ""
	case int64:
		return int(x), ""
	case bool:
		if x {
			return 1, ""
		}
		return 0, ""
	case string:
		if i, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
			return i, ""
		}
	}
	return 0, MsgInvalidInteger
}

// Natural reads data[key] as a natural number (0 and up), returning def when
// the key is absent or empty, and a validation *Error naming the key otherwise.
func Natural(data map[string]any, key string, def int) (int, *Error) {
	v, ok := data[key]
	if !ok || v == nil || v == "" {
		return def, nil
	}
	n, msg := AsInt(v)
	if msg != "" {
		return 0, FieldError(key, msg)
	}
	if n < 0 {
		return 0, FieldError(key, MsgNotNatural)
	}
	return n, nil
}

// String returns data[key] as a string ("" when absent; numbers and booleans
// are formatted).
func String(data map[string]any, key string) string {
	switch x := data[key].(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	}
	return ""
}

// StringList reads data[key] as a list of strings: a JSON list, repeated keys,
// or a single string (kept whole).
func StringList(data map[string]any, key string) []string {
	switch x := data[key].(type) {
	case string:
		return []string{x}
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
