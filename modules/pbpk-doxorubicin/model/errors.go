package model

import (
	"fmt"
	"strings"
)

// InputError reports a problem with one input field (HTTP 422 at the API).
type InputError struct {
	// Field is the JSON name of the offending field.
	Field string `json:"field"`
	// Message says what is wrong, in words a user can act on.
	Message string `json:"message"`
	// Suggestions lists close matches (for an unknown or unusable chemical).
	Suggestions []string `json:"suggestions,omitempty"`
	// Missing lists the parameters a chemical lacks for the requested species.
	Missing []string `json:"missing,omitempty"`
}

func (e *InputError) Error() string {
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

func inputErr(field, format string, args ...any) *InputError {
	return &InputError{Field: field, Message: fmt.Sprintf(format, args...)}
}
