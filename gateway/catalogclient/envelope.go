package catalogclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// TypeUnavailable is CKAN's error type of a catalog that cannot be reached.
const TypeUnavailable = "Service Unavailable"

// Error is a catalog action that did not succeed: CKAN's error object with
// the answer's HTTP status.
type Error struct {
	// Action is the action's name ("" when decoded from an answer alone).
	Action string
	// Status is the answer's HTTP status (503 when the catalog could not
	// be reached, 502 when it answered without an envelope).
	Status int
	// Type is CKAN's __type ("Not Found Error", "Validation Error", ...).
	Type string
	// Message is CKAN's message ("" for a validation error, which names
	// its fields instead).
	Message string
	// Fields are a validation error's messages per field.
	Fields map[string][]string
	// Err is the transport's error when the catalog could not be reached.
	Err error
}

// Error is the message, or the type and status without one; a validation
// error without a message lists its fields.
func (e *Error) Error() string {
	if e.Message != "" {
		return e.Message
	}
	if len(e.Fields) > 0 {
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + strings.Join(e.Fields[k], " ")
		}
		return e.Type + ": " + strings.Join(parts, "; ")
	}
	return fmt.Sprintf("%s (%d)", e.Type, e.Status)
}

// Unwrap is the transport's error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Decode reads CKAN's {success, result, error} envelope of an answer with
// the given status and decodes its result into out (nil: dropped). A
// failed action returns an *Error.
func Decode(status int, envelope []byte, out any) error {
	var env struct {
		Success bool                       `json:"success"`
		Result  json.RawMessage            `json:"result"`
		Error   map[string]json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(envelope, &env); err != nil {
		return &Error{Status: http.StatusBadGateway, Type: "Error", Message: fmt.Sprintf("the catalog answered %d without an envelope", status)}
	}
	if !env.Success || status != http.StatusOK {
		e := &Error{Status: status, Fields: map[string][]string{}}
		if e.Status == http.StatusOK { // success false with 200: not CKAN's, but a failure
			e.Status = http.StatusBadGateway
		}
		for k, raw := range env.Error {
			switch k {
			case "__type":
				_ = json.Unmarshal(raw, &e.Type)
			case "message":
				_ = json.Unmarshal(raw, &e.Message)
			default:
				e.Fields[k] = fieldMessages(raw)
			}
		}
		if e.Type == "" {
			e.Type = "Error"
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		return &Error{Status: http.StatusBadGateway, Type: "Error", Message: "the catalog's answer could not be read: " + err.Error()}
	}
	return nil
}

// fieldMessages is a validation error's member as text: each element of a
// list, else the value itself.
func fieldMessages(raw json.RawMessage) []string {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		list = []json.RawMessage{raw}
	}
	out := make([]string, 0, len(list))
	for _, m := range list {
		var s string
		if json.Unmarshal(m, &s) == nil {
			out = append(out, s)
			continue
		}
		out = append(out, string(bytes.TrimSpace(m)))
	}
	return out
}
