// Package ckan is the CKAN action API v3 on the wire: how a request becomes
// a data dict (query string, form, JSON body), how values are coerced, the
// {help, success, result} envelope, the error types with their exact JSON and
// HTTP status codes, and the records both sides render (the user dict). It
// is wire-only: it imports nothing else of toxgate and knows nothing of
// MongoDB or go-plugin, so both the catalog plugin and the gateway core
// (user and token actions, the plugin host's failures) use it without the
// gateway reaching into the catalog's domain. See catalog/RATIONALE.md.
package ckan

import (
	"errors"
	"fmt"
)

// Error __type values, exactly as CKAN sends them.
const (
	TypeNotFound      = "Not Found Error"
	TypeAuthorization = "Authorization Error"
	TypeValidation    = "Validation Error"
	TypeIntegrity     = "Integrity Error"
	TypeSearchQuery   = "Search Query Error"
	TypeSearch        = "Search Error"
	TypeInternal      = "Internal Server Error"
	// TypeUnavailable is the __type of a 503: the service cannot answer
	// now (a catalog still loading, a plugin that is down) and the client
	// should retry.
	TypeUnavailable = "Service Unavailable"
)

// Error is a CKAN action error: its HTTP status and the "error" object of the
// envelope. A Bare error (bad request, unknown action) is sent as a JSON string
// without envelope.
type Error struct {
	// Status is the HTTP status code.
	Status int
	// Type is the error's __type.
	Type string
	// Message is the "message" member (unused when Fields is set).
	Message string
	// Fields is a validation error dict: field name to messages.
	Fields map[string]any
	// Data is the request echo of an Integrity Error.
	Data any
	// Bare marks a reply that is only the JSON string Message, status 400.
	Bare bool
}

// Error implements error.
func (e *Error) Error() string {
	if e.Bare {
		return e.Message
	}
	if e.Fields != nil {
		return fmt.Sprintf("%s: %v", e.Type, e.Fields)
	}
	return e.Type + ": " + e.Message
}

// Object is the "error" member of the envelope.
func (e *Error) Object() map[string]any {
	m := make(map[string]any, len(e.Fields)+3)
	for k, v := range e.Fields {
		m[k] = v
	}
	if e.Fields == nil || e.Message != "" {
		m["message"] = e.Message
	}
	if e.Type == TypeIntegrity {
		m["data"] = e.Data
	}
	m["__type"] = e.Type
	return m
}

// NotFound is CKAN's NotFound (404): "Not found" or "Not found: <text>".
func NotFound(text string) *Error {
	msg := "Not found"
	if text != "" {
		msg += ": " + text
	}
	return &Error{Status: 404, Type: TypeNotFound, Message: msg}
}

// NotAuthorized is CKAN's NotAuthorized (403): "Access denied" or
// "Access denied: <text>".
func NotAuthorized(text string) *Error {
	msg := "Access denied"
	if text != "" {
		msg += ": " + text
	}
	return &Error{Status: 403, Type: TypeAuthorization, Message: msg}
}

// Validation is CKAN's ValidationError (409) with an error dict.
func Validation(fields map[string]any) *Error {
	return &Error{Status: 409, Type: TypeValidation, Fields: fields}
}

// FieldError is a validation error for one field with the given messages.
func FieldError(field string, messages ...string) *Error {
	return Validation(map[string]any{field: messages})
}

// ValidationMessage is a ValidationError (409) carrying a plain message.
func ValidationMessage(msg string) *Error {
	return &Error{Status: 409, Type: TypeValidation, Message: msg}
}

// DataError is CKAN's DataError (400, "Integrity Error") echoing the request.
func DataError(msg string, data any) *Error {
	return &Error{Status: 400, Type: TypeIntegrity, Message: msg, Data: data}
}

// SearchQueryError is a 400 "Search Query Error"; msg is wrapped as CKAN does:
// Search Query is invalid: "<msg>".
func SearchQueryError(msg string) *Error {
	return &Error{Status: 400, Type: TypeSearchQuery, Message: fmt.Sprintf("Search Query is invalid: %q", msg)}
}

// SearchError is a 409 "Search Error": "Search error: <msg>".
func SearchError(msg string) *Error {
	return &Error{Status: 409, Type: TypeSearch, Message: "Search error: " + msg}
}

// Internal is the 500 reply for any unexpected failure.
func Internal() *Error {
	return &Error{Status: 500, Type: TypeInternal, Message: "Internal Server Error"}
}

// Unavailable is a 503 Service Unavailable: retry later.
func Unavailable(msg string) *Error {
	return &Error{Status: 503, Type: TypeUnavailable, Message: msg}
}

// BadRequest is CKAN's bare-string 400 reply "Bad request - <msg>".
func BadRequest(msg string) *Error {
	return &Error{Status: 400, Message: "Bad request - " + msg, Bare: true}
}

// UnknownAction is the 400 reply for an action name nobody serves.
func UnknownAction(name string) *Error {
	return BadRequest("Action name not known: " + name)
}

// POSTRequired is the 400 reply to a GET of an action with side effects.
func POSTRequired() *Error {
	return BadRequest("JSON Error: Invalid request. Please use POST method for your request")
}

// AsError returns err as a *Error; anything else becomes Internal.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal()
}
