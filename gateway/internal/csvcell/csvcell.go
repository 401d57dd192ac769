// Package csvcell turns a JSON value into a CSV cell, the one way the
// gateway does it: a model's answer as CSV (gateway/modulehost), a scoring
// job's result table (gateway/jobs) and a model page's "Download CSV"
// (gateway/web) write the same cells for the same values.
package csvcell

import (
	"bytes"
	"encoding/json"
)

// Raw is a JSON value as a CSV cell: a string as it is, null (or nothing)
// empty, numbers and booleans as written, arrays and objects as their
// JSON text.
func Raw(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0 || string(v) == "null":
		return ""
	case v[0] == '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	return string(v)
}

// Value is Raw of a decoded JSON value (decoded with UseNumber, so that a
// number keeps the digits it was written with).
func Value(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case json.RawMessage:
		return Raw(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
