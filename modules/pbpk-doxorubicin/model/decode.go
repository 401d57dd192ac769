package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Decode parses a JSON request body into Input, reporting a wrong type,
// an unknown field or malformed JSON as an *InputError naming the field.
func Decode(body []byte) (Input, error) {
	var in Input
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return in, inputErr(te.Field, "must be a %s, got a JSON %s", te.Type.String(), te.Value)
		}
		var field string
		if _, e := fmt.Sscanf(err.Error(), "json: unknown field %q", &field); e == nil {
			return in, inputErr(field, "unknown field")
		}
		return in, inputErr("body", "invalid JSON: %v", err)
	}
	return in, nil
}
