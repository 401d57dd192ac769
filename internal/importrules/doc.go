// Package importrules holds the test that enforces who may import what in
// module toxgate (importrules_test.go): the catalog imports no gateway
// package; the gateway imports of the catalog only its CKAN wire and its
// file store; the catalog, the identity store and the configuration link
// no WebAssembly runtime or RPC stack; the plugin contract's types need the
// standard library alone, the gateway's catalog client and CSV cells that
// and the contract; sdk imports no module, gateway or catalog
// package; modules share code only through sdk and modules/internal. It
// runs in plain `go test`, so in `make test`.
package importrules
