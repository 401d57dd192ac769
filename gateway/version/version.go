// Package version holds the gateway's version, set at build time with
// -ldflags "-X toxgate/gateway/version.Version=...".
package version

// Version of this build ("dev" when not set by the build).
var Version = "dev"
