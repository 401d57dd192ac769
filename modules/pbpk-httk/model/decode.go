package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Decode parses a JSON request body into Input, reporting a wrong type or
// malformed JSON as an *InputError naming the field.
func Decode(body []byte) (Input, error) {
	var in Input
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, decodeError(err)
	}
	return in, nil
}

func decodeError(err error) *InputError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return inputErr(te.Field, "must be a %s, got a JSON %s", te.Type.String(), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return inputErr("body", "invalid JSON at byte %d: %v", se.Offset, err)
	}
	if msg := err.Error(); len(msg) > 0 {
		var field string
		if _, e := fmt.Sscanf(msg, "json: unknown field %q", &field); e == nil {
			return inputErr(field, "unknown field")
		}
	}
	return inputErr("body", "invalid JSON: %v", err)
}
