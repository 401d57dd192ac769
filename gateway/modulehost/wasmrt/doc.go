// Package wasmrt is the ABI core of the module host: it loads a toxgate module
// (sdk/ABI.md) into its own wazero Runtime, checks its exports, ABI version,
// manifest and limits, keeps a bounded pool of instances and runs one call at a
// time on an instance. It knows nothing of HTTP.
//
// Sandbox: a guest gets WASI with no preopened directories, no environment, no
// arguments, no network, wazero's fake clocks and deterministic randomness; its
// only other import is the optional toxgate.log. Linear memory is capped per
// module (on Unix it is an address range reserved up to the cap and made
// writable as the guest grows it, so growing never copies: memory_unix.go),
// and every call runs under the caller's context deadline: at load the
// module is instrumented with fuel checks on the branches back to loops and at
// function entries that stop a call whose deadline passed (fuel*.go; modules the rewriter cannot
// handle run with wazero's WithCloseOnContextDone instead). An instance whose call traps,
// panics, times out or runs out of memory is closed and never reused.
package wasmrt
