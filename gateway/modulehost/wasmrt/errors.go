package wasmrt

import (
	"errors"
	"fmt"
)

// ErrRetired is returned by Call once Retire has begun; callers look the module up again.
var ErrRetired = errors.New("wasmrt: module retired")

// FailureKind classifies a failed call.
type FailureKind string

// Failure kinds.
const (
	// FailTimeout: the call passed its deadline and was stopped.
	FailTimeout FailureKind = "timeout"
	// FailBusy: no instance became free before the deadline.
	FailBusy FailureKind = "busy"
	// FailCrash: the guest trapped, panicked or exited.
	FailCrash FailureKind = "crash"
	// FailOutOfMemory: the guest hit its memory cap.
	FailOutOfMemory FailureKind = "out_of_memory"
	// FailOutputTooLarge: the output exceeded the host's output cap.
	FailOutputTooLarge FailureKind = "output_too_large"
	// FailBadOutput: the guest broke the ABI (bad pointer, bad framing, invalid JSON).
	FailBadOutput FailureKind = "bad_output"
	// FailCanceled: the caller canceled the call.
	FailCanceled FailureKind = "canceled"
)

// Failure is a call that produced no answer from the model. Instance tells
// whether the instance was discarded.
type Failure struct {
	Kind FailureKind
	// Discarded is true when the instance was closed because of the failure.
	Discarded bool
	// Detail is what the guest wrote to stdout/stderr before failing (truncated).
	Detail string
	Err    error
}

func (f *Failure) Error() string {
	return fmt.Sprintf("module call failed (%s): %v", f.Kind, f.Err)
}

func (f *Failure) Unwrap() error { return f.Err }

// LoadError is a module that was refused at load; Reason says why in words an
// operator can act on.
type LoadError struct {
	Reason string
	Err    error
}

func (e *LoadError) Error() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

func (e *LoadError) Unwrap() error { return e.Err }

func refuse(err error, format string, args ...any) *LoadError {
	return &LoadError{Reason: fmt.Sprintf(format, args...), Err: err}
}
