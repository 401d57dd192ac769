package datastore

import (
	"encoding/json"
	"fmt"
	"strings"

	"toxgate/catalog/ckan"
)

// decodeJSONString parses a parameter that came as a JSON string (GET
// query strings and forms carry objects and lists that way).
func decodeJSONString(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
		return v
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return v
	}
	return out
}

// stringList reads a list of strings given as a list, a JSON list or a
// comma-separated string.
func stringList(data map[string]any, key string) ([]string, error) {
	v, ok := data[key]
	if !ok || v == nil {
		return nil, nil
	}
	v = decodeJSONString(v)
	switch x := v.(type) {
	case string:
		var out []string
		for _, p := range strings.Split(x, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, ckan.FieldError(key, "Not a string")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, ckan.FieldError(key, "Not a list")
}

// dictList reads a list of objects (fields, records).
func dictList(data map[string]any, key string) ([]map[string]any, bool, error) {
	v, ok := data[key]
	if !ok || v == nil {
		return nil, false, nil
	}
	v = decodeJSONString(v)
	list, ok := v.([]any)
	if !ok {
		return nil, true, ckan.FieldError(key, "Not a list")
	}
	out := make([]map[string]any, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, true, ckan.FieldError(key, fmt.Sprintf("The data was invalid (for example: a numeric value is out of range or was inserted into a text field): item %d is not an object", i))
		}
		out[i] = m
	}
	return out, true, nil
}

// dict reads an object parameter (filters).
func dict(data map[string]any, key string) (map[string]any, bool, error) {
	v, ok := data[key]
	if !ok || v == nil {
		return nil, false, nil
	}
	m, ok := decodeJSONString(v).(map[string]any)
	if !ok {
		return nil, true, ckan.FieldError(key, "Not a dict")
	}
	return m, true, nil
}

// boolParam reads a boolean with a default.
func boolParam(data map[string]any, key string, def bool) (bool, error) {
	v, ok := data[key]
	if !ok || v == nil || v == "" {
		return def, nil
	}
	b, ok := ckan.AsBool(v)
	if !ok {
		return false, ckan.FieldError(key, "Value must be one of: true, false")
	}
	return b, nil
}

// ResourceID is the resource_id parameter (CKAN also takes "id").
func ResourceID(data map[string]any) string {
	for _, k := range []string{"resource_id", "id"} {
		if s, ok := data[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}
