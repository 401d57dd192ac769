// Package abi defines the toxgate module ABI shared by the host and the guest SDK:
// its version, the names of the exports and imports, the result framing, the
// structured guest error and the manifest every module embeds.
//
// The package has no dependencies beyond the standard library so that it compiles
// both for the host and for GOOS=wasip1 guests. sdk/ABI.md is the normative text.
package abi

import "fmt"

// Version is the ABI version this package describes. A module reports the version
// it was built for from ExportABIVersion; the host refuses any other value.
const Version = 1

// Names of the functions a module exports.
const (
	// ExportABIVersion is `() -> i32`: the ABI version the module implements.
	ExportABIVersion = "toxgate_abi_version"
	// ExportManifest is `() -> i64`: ptr<<32|len of the manifest JSON in guest memory.
	ExportManifest = "toxgate_manifest"
	// ExportAlloc is `(len i32) -> i32`: a guest buffer of len bytes for the input.
	ExportAlloc = "toxgate_alloc"
	// ExportEvaluate is `(route i32, ptr i32, len i32) -> i64`: evaluates the input
	// for manifest route number route and returns ptr<<32|len of a framed result.
	ExportEvaluate = "toxgate_evaluate"
	// ExportInitialize is the WASI reactor initializer, called once per instance.
	ExportInitialize = "_initialize"
)

// Names of the optional host import.
const (
	// ImportModule is the module name of the host functions.
	ImportModule = "toxgate"
	// ImportLog is `(level i32, ptr i32, len i32)`: writes one log line; level uses
	// the log/slog numbering (-4 debug, 0 info, 4 warn, 8 error).
	ImportLog = "log"
)

// Status is the first byte of an evaluate result.
const (
	// StatusOK: the rest of the result is the output JSON document.
	StatusOK byte = 0
	// StatusError: the rest of the result is an Error as JSON.
	StatusError byte = 1
)

// Pack packs a guest pointer and a length into the i64 returned by the ABI.
func Pack(ptr, n uint32) uint64 { return uint64(ptr)<<32 | uint64(n) }

// Unpack splits an i64 returned by the ABI into a guest pointer and a length.
func Unpack(v uint64) (ptr, n uint32) { return uint32(v >> 32), uint32(v) }

// Kind classifies a guest error; the host maps it to an HTTP status.
type Kind string

// Guest error kinds.
const (
	// KindInvalidInput: the input is well-formed JSON but not acceptable (HTTP 422).
	KindInvalidInput Kind = "invalid_input"
	// KindNotFound: the input names something the model does not know (HTTP 404).
	KindNotFound Kind = "not_found"
	// KindInternal: the model failed (HTTP 500).
	KindInternal Kind = "internal"
)

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool {
	return k == KindInvalidInput || k == KindNotFound || k == KindInternal
}

// Error is the structured error a module returns with StatusError.
type Error struct {
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
	// Field names the offending input field (dotted path), if any.
	Field string `json:"field,omitempty"`
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", e.Kind, e.Field, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}
