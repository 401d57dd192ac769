// Package inputerr is the typed input error of native model packages: the
// field at fault, a message a user can act on, and optional close matches
// and missing parameters. A module's main.go turns it into the SDK's
// invalid-input error (HTTP 422 naming the field).
package inputerr

import (
	"fmt"
	"strings"
)

// Error reports a problem with one input field.
type Error struct {
	// Field is the JSON name of the offending field.
	Field string `json:"field"`
	// Message says what is wrong, in words a user can act on.
	Message string `json:"message"`
	// Suggestions lists close matches (e.g. for an unknown chemical).
	Suggestions []string `json:"suggestions,omitempty"`
	// Missing lists parameters the input lacks for the requested computation.
	Missing []string `json:"missing,omitempty"`
}

// New returns an Error for field with a formatted message.
func New(field, format string, args ...any) *Error {
	return &Error{Field: field, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Field, e.Message)
	if len(e.Missing) > 0 {
		fmt.Fprintf(&b, " (missing: %s)", strings.Join(e.Missing, ", "))
	}
	if len(e.Suggestions) > 0 {
		fmt.Fprintf(&b, " (closest: %s)", strings.Join(e.Suggestions, "; "))
	}
	return b.String()
}
