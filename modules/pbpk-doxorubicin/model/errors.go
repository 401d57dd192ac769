package model

import "toxgate/sdk/inputerr"

// InputError reports a problem with one input field (HTTP 422 at the API).
type InputError = inputerr.Error

func inputErr(field, format string, args ...any) *InputError {
	return inputerr.New(field, format, args...)
}
