package datastore

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Field is one column of a DataStore table as datastore_create takes it and
// datastore_search reports it.
type Field struct {
	// ID is the column name.
	ID string `json:"id"`
	// Type is the CKAN type name as given (text, int, int4, int8, float8,
	// numeric, bool, date, timestamp, json, or an array of one of them as
	// "_text" or "text[]").
	Type string `json:"type"`
	// Info is free metadata (label, notes, type_override) kept as given.
	Info map[string]any `json:"info,omitempty"`
}

// base types, by CKAN name and alias.
var baseTypes = map[string]string{
	"text": "text", "varchar": "text", "int": "int4", "int4": "int4", "integer": "int4", "int8": "int8", "bigint": "int8",
	"float8": "float8", "float": "float8", "double precision": "float8", "numeric": "numeric",
	"bool": "bool", "boolean": "bool", "date": "date", "timestamp": "timestamp", "json": "json", "nested": "json",
}

// kind is a column's canonical type: a base type and whether it is an array.
type kind struct {
	base  string
	array bool
}

// parseType reads a CKAN type name ("int", "_text", "float8[]").
func parseType(t string) (kind, bool) {
	t = strings.ToLower(strings.TrimSpace(t))
	arr := false
	if strings.HasPrefix(t, "_") {
		arr, t = true, t[1:]
	} else if strings.HasSuffix(t, "[]") {
		arr, t = true, strings.TrimSuffix(t, "[]")
	}
	b, ok := baseTypes[t]
	if !ok || (arr && b == "json") {
		return kind{}, false
	}
	return kind{base: b, array: arr}, true
}

// validFieldName applies CKAN's rule: not empty, no leading underscore, no
// double quote, at most 63 bytes (PostgreSQL's identifier limit).
func validFieldName(id string) bool {
	return id != "" && !strings.HasPrefix(id, "_") && !strings.ContainsAny(id, "\"\x00") && len(id) <= 63 && strings.TrimSpace(id) == id
}

// guessType is the type datastore_create gives a field that came only with
// records, from its first non-null value (CKAN's _guess_type).
func guessType(v any) string {
	switch x := v.(type) {
	case map[string]any, []any:
		return "json"
	case bool:
		return "bool"
	case json.Number:
		if i, err := x.Int64(); err == nil {
			if i >= math.MinInt32 && i <= math.MaxInt32 {
				return "int"
			}
			return "int8"
		}
		return "float8"
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<31 {
			return "int"
		}
		return "float8"
	case string:
		if _, ok := parseTimestamp(x); ok && len(x) >= 10 {
			return "timestamp"
		}
	}
	return "text"
}

// coerce converts a JSON value for column kind k into a canonical Go value:
// nil, string, int64, float64, bool, time.Time, a json text (jsonText) or,
// for arrays, []any of those. An empty string is NULL for every type but text.
func coerce(k kind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if k.array {
		if s, ok := v.(string); ok {
			if s == "" {
				return nil, nil
			}
			var list []any
			dec := json.NewDecoder(strings.NewReader(s))
			dec.UseNumber()
			if err := dec.Decode(&list); err != nil {
				return nil, fmt.Errorf("invalid input syntax for type %s[]: %q", k.base, s)
			}
			v = list
		}
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("invalid input for type %s[]: %s", k.base, short(v))
		}
		out := make([]any, len(list))
		for i, e := range list {
			c, err := coerce(kind{base: k.base}, e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	if s, ok := v.(string); ok && s == "" && k.base != "text" {
		return nil, nil
	}
	bad := func() error { return fmt.Errorf("invalid input syntax for type %s: %s", typeLabel(k.base), short(v)) }
	switch k.base {
	case "text":
		switch x := v.(type) {
		case string:
			return x, nil
		case json.Number:
			return x.String(), nil
		case bool:
			return strconv.FormatBool(x), nil
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		}
		return nil, bad()
	case "int4", "int8":
		var i int64
		switch x := v.(type) {
		case json.Number:
			n, err := strconv.ParseInt(x.String(), 10, 64)
			if err != nil {
				return nil, bad()
			}
			i = n
		case float64:
			if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
				return nil, bad()
			}
			i = int64(x)
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				return nil, bad()
			}
			i = n
		default:
			return nil, bad()
		}
		if k.base == "int4" && (i < math.MinInt32 || i > math.MaxInt32) {
			return nil, fmt.Errorf("value %d is out of range for type integer", i)
		}
		return i, nil
	case "float8", "numeric":
		switch x := v.(type) {
		case json.Number:
			f, err := strconv.ParseFloat(x.String(), 64)
			if err != nil {
				return nil, bad()
			}
			return f, nil
		case float64:
			return x, nil
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, bad()
			}
			return f, nil
		}
		return nil, bad()
	case "bool":
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "t", "true", "y", "yes", "on", "1":
				return true, nil
			case "f", "false", "n", "no", "off", "0":
				return false, nil
			}
		case json.Number:
			switch x.String() {
			case "1":
				return true, nil
			case "0":
				return false, nil
			}
		}
		return nil, bad()
	case "date", "timestamp":
		s, ok := v.(string)
		if !ok {
			return nil, bad()
		}
		t, ok := parseTimestamp(strings.TrimSpace(s))
		if !ok {
			return nil, bad()
		}
		if k.base == "date" {
			t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		}
		return t, nil
	case "json":
		b, err := json.Marshal(v)
		if err != nil {
			return nil, bad()
		}
		return jsonText(b), nil
	}
	return nil, bad()
}

// jsonText is a json column's value, already encoded.
type jsonText string

func typeLabel(base string) string {
	switch base {
	case "int4":
		return "integer"
	case "int8":
		return "bigint"
	case "float8":
		return "double precision"
	case "bool":
		return "boolean"
	}
	return base
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		b = append(b[:77], "..."...)
	}
	return string(b)
}

var timeLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02",
}

// parseTimestamp reads an ISO 8601 date or date-time; offsets are
// converted to UTC and dropped, as a PostgreSQL timestamp column does.
func parseTimestamp(s string) (time.Time, bool) {
	if len(s) < 10 || s[4] != '-' {
		return time.Time{}, false
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// formatTime renders a date or timestamp as CKAN does (isoformat).
func formatTime(base string, t time.Time) string {
	if base == "date" {
		return t.Format("2006-01-02")
	}
	if t.Nanosecond()/1000 != 0 {
		return t.Format("2006-01-02T15:04:05.000000")
	}
	return t.Format("2006-01-02T15:04:05")
}

// cellSize is the size a value counts toward max_cell_bytes and the table
// size: its text length.
func cellSize(v any) int {
	switch x := v.(type) {
	case nil:
		return 0
	case string:
		return len(x)
	case jsonText:
		return len(x)
	case []any:
		n := 2
		for _, e := range x {
			n += cellSize(e) + 1
		}
		return n
	case time.Time:
		return 26
	case bool:
		return 1
	}
	return 8
}
