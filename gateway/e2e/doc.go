// Package e2e holds the gateway's end-to-end tests: each starts the real
// gateway program with the real catalog plugin and store (gateway/harness)
// and talks to it over loopback HTTP, a browser or the CLI, as a client
// would. The package has no code of its own besides the tests.
package e2e
