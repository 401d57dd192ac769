// Package contract is the agreement between the gateway and its action
// plugins (such as the catalog): the messages, the identity and user types,
// the environment the host sets, and the one service a plugin offers, with
// two calls. At start the gateway asks the plugin to Describe itself (its
// actions and whether each accepts GET); then it sends every action request
// raw (method, content type, query, body) with the caller's identity and
// gets back a status, a content type and a body.
//
// The package depends on the standard library alone, so that the catalog
// and the gateway's identity store use its types without linking an RPC
// stack. The go-plugin glue (handshake, net/rpc and gRPC services, the
// user directory over the broker) is plugins/contract/goplugin; both
// transports carry the hand-written binary encoding of codec.go. See
// plugins/README.md for the measurements behind the choice.
package contract

import (
	"context"
	"time"
)

// Environment variables the host sets for a plugin process.
const (
	// EnvMongoURI is the MongoDB URI the plugin connects to.
	EnvMongoURI = "TOXGATE_MONGODB_URI"
	// EnvMongoDatabase is the database name.
	EnvMongoDatabase = "TOXGATE_MONGODB_DATABASE"
	// EnvTransport selects the RPC transport: "netrpc" (default) or "grpc".
	EnvTransport = "TOXGATE_PLUGIN_TRANSPORT"
	// EnvLogLevel is the plugin's slog level: debug, info, warn or error.
	EnvLogLevel = "TOXGATE_LOG_LEVEL"
	// EnvReplacing is "1" when the process starts to take over from a
	// running one (hot reload): that one serves until this one is ready,
	// so the plugin may start gently, leaving the machine to the requests.
	EnvReplacing = "TOXGATE_PLUGIN_REPLACING"
	// EnvLoadGate, for tests only, names a FIFO the catalog plugin reads
	// to its end after its handshake and before it loads: a test holds
	// the plugin in its loading state until it writes to the FIFO and
	// closes it. The gateway passes it on only with its test routes on.
	EnvLoadGate = "TOXGATE_CATALOG_LOAD_GATE"
	// EnvCPUProfile, for benchmarks only, names a file: the catalog plugin
	// starts a CPU profile on SIGUSR1 and writes it there on the next one.
	// The gateway passes it on only with its test routes on.
	EnvCPUProfile = "TOXGATE_CATALOG_CPUPROFILE"
)

// StartTimeout is how long a plugin may take from its start to its
// handshake: opening its store, nothing more. A plugin that keeps data in
// memory (the catalog) loads it after the handshake and declares
// ActionReady, so the gateway serves everything else meanwhile.
const StartTimeout = time.Minute

// LoadTimeout bounds a plugin's load after its handshake: the catalog
// gives its load this long (reading every record and its search index
// takes minutes for a catalog of a few hundred thousand datasets on a busy
// machine), and the host waits this long for ActionReady before it gives
// up on a starting or replacing process.
const LoadTimeout = 15 * time.Minute

// ActionReady is the internal action by which the host learns that a
// plugin has loaded. A plugin that declares it in its manifest (Internal,
// GET) is not ready after its handshake: the host counts it as loading
// (readiness says so, and a hot reload keeps the old process serving)
// until a call of ActionReady answers 200. The call waits until the
// plugin is ready or the request's deadline passes, answering 503 then,
// so the host learns it without polling. While it loads, the plugin's
// other actions answer a CKAN-shaped 503.
const ActionReady = "plugin_ready"

// Transports.
const (
	TransportGRPC   = "grpc"
	TransportNetRPC = "netrpc"
)

// Identity is the caller as the gateway authenticated it; the zero value is
// the anonymous caller.
type Identity struct {
	// UserID is the user's id (uuid); empty when anonymous.
	UserID string
	// Name is the CKAN user name; empty when anonymous.
	Name string
	// Sysadmin is true for site administrators.
	Sysadmin bool
}

// Anonymous reports whether the caller carries no identity.
func (i Identity) Anonymous() bool { return i.UserID == "" && i.Name == "" }

// UserInfo is what a plugin may know of a user. The gateway's identity
// store (gateway/identity) owns the users; plugins read them through Users.
type UserInfo struct {
	// ID is the user's id (uuid).
	ID string
	// Name is the CKAN user name.
	Name string
	// Email is the e-mail address (plugins show only its hash).
	Email string
	// Fullname and About are the profile's display fields.
	Fullname, About string
	// State is pending, active or deleted.
	State string
	// Sysadmin is true for site administrators.
	Sysadmin bool
	// Created is when the account was made.
	Created time.Time
}

// Users is the user directory a plugin is given: the one way a plugin
// learns about users other than its caller.
type Users interface {
	// LookupUsers returns the users named by refs, each an id or else a
	// name, in no particular order; unknown refs are left out.
	LookupUsers(ctx context.Context, refs []string) ([]UserInfo, error)
}

// ActionSpec declares one action a plugin serves.
type ActionSpec struct {
	// Name is the action name, e.g. "package_show".
	Name string
	// GET is true when the action is side-effect free and accepts GET.
	GET bool
	// Description is one line for the API documentation.
	Description string
	// Internal actions are called by the gateway itself (for example to
	// authorize a file download) and are never routed from HTTP.
	Internal bool
}

// Manifest is what a plugin declares at start.
type Manifest struct {
	// Name is the plugin's name, e.g. "catalog".
	Name string
	// Version is the plugin's version string.
	Version string
	// Actions are the actions it serves.
	Actions []ActionSpec
}

// Request is one action call.
type Request struct {
	// Action is the action name.
	Action string
	// Method is the HTTP method.
	Method string
	// ContentType is the request's Content-Type.
	ContentType string
	// Query is the raw query string.
	Query string
	// Body is the request body.
	Body []byte
	// SiteURL is the public base URL of the gateway.
	SiteURL string
	// Caller is the authenticated caller.
	Caller Identity
	// Deadline is when the gateway stops waiting (zero: none).
	Deadline time.Time
	// Upload is the file the gateway stored from the request's multipart
	// "upload" field (nil: none). Only the gateway sets it, so a plugin can
	// trust that the file exists, is complete and has this hash.
	Upload *Upload
	// Arrived is when the gateway took the request, on the machine's
	// monotonic clock (Monotonic), which every process of the machine
	// shares; 0: not known. A plugin that checks its data against the
	// store before each call (the catalog's freshness check) may answer
	// from a check that started after this instant, even one that started
	// before the call reached the plugin.
	Arrived int64
}

// Upload describes a file the gateway has stored (see catalog/filestore).
type Upload struct {
	// FileID is the stored file's id.
	FileID string
	// Filename is the client's file name.
	Filename string
	// Mimetype is guessed from the name and content.
	Mimetype string
	// Size is the number of bytes.
	Size int64
	// SHA256 is the hex SHA-256 of the bytes.
	SHA256 string
}

// Response is the reply to an action call.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// ContentType is the reply's Content-Type.
	ContentType string
	// Body is the reply body.
	Body []byte
	// ErrorType is the CKAN error __type when the call failed ("" on success).
	ErrorType string
}

// ActionPlugin is implemented by the plugin and by the host's client stubs.
type ActionPlugin interface {
	// Describe returns the plugin's manifest.
	Describe(ctx context.Context) (*Manifest, error)
	// Call runs one action. An error means the call could not be run at all;
	// CKAN errors travel inside the Response.
	Call(ctx context.Context, req *Request) (*Response, error)
}
