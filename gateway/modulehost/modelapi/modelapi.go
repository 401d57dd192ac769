// Package modelapi is the vocabulary of a model call that the module host
// shares with its in-process callers (scoring jobs): the route a call
// resolves to, the provenance of an answer, the error a call fails with and
// its codes. It imports no WebAssembly runtime, so that a caller links none.
package modelapi

import (
	"encoding/json"
	"time"

	"toxgate/sdk/abi"
)

// ProvenanceMember is the member every JSON object a model answers gains:
// {"model", "version", "module_sha256", "route"}.
const ProvenanceMember = "provenance"

// Provenance names the exact module that computed an answer.
type Provenance struct {
	Model        string `json:"model"`
	Version      string `json:"version"`
	ModuleSHA256 string `json:"module_sha256"`
	Route        string `json:"route,omitempty"`
}

// CallError is a model call's failure as a client sees it.
type CallError struct {
	Status     int
	Code       string
	Message    string
	Field      string
	RetryAfter time.Duration
}

// Error is "code: message", or "code: field: message" when the error names a field.
func (e *CallError) Error() string {
	if e.Field != "" {
		return e.Code + ": " + e.Field + ": " + e.Message
	}
	return e.Code + ": " + e.Message
}

// ModelRef is one route of a serving module.
type ModelRef struct {
	Provenance
	// RouteIndex is the route's place in the manifest.
	RouteIndex int
	// Batch is the route's batch declaration, if any.
	Batch *abi.Batch
	// InputSchema is the route's input schema.
	InputSchema json.RawMessage
	// Table names the tabular part of the output, if any.
	Table *abi.Table
}

// BackgroundPrefix starts the caller names of background work (scoring
// jobs): low priority at each module's gate, at most the module host's
// Config.BackgroundShare of its instances.
const BackgroundPrefix = "job:"

// CallerKey is the key of a caller's fair share: the authenticated user
// (every token and session of a user share it: more tokens buy nothing),
// else the client's address. Every way into the models (the API, the Open
// Inference Protocol, the web pages, scoring jobs) uses it.
func CallerKey(userID, userName, remoteIP string) string {
	switch {
	case userID != "":
		return "user:" + userID
	case userName != "":
		return "user:" + userName
	}
	return "ip:" + remoteIP
}
