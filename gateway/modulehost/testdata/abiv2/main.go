// Command abiv2 is a test module that claims an ABI version the host does not know.
package main

//go:wasmexport toxgate_abi_version
func abiVersion() int32 { return 2 }

func main() {}
