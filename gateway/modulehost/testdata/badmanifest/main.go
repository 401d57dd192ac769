// Command badmanifest is a test module that speaks ABI v1 but declares a manifest
// the host must refuse (its version is not semantic and it has no model card).
package main

import "unsafe"

var manifest = []byte(`{"abi":1,"name":"badmanifest","version":"one","description":"bad","routes":[{"path":"/bad/evaluate","input_schema":{"type":"object"},"output":{"description":"x"}}],"limits":{},"model_card":{"summary":""}}`)

var buf []byte

//go:wasmexport toxgate_abi_version
func abiVersion() int32 { return 1 }

//go:wasmexport toxgate_manifest
func manifestExport() uint64 {
	return uint64(uintptr(unsafe.Pointer(&manifest[0])))<<32 | uint64(len(manifest))
}

//go:wasmexport toxgate_alloc
func alloc(n uint32) uint32 {
	buf = make([]byte, n+1)
	return uint32(uintptr(unsafe.Pointer(&buf[0])))
}

//go:wasmexport toxgate_evaluate
func evaluate(route, ptr, n uint32) uint64 { return 0 }

func main() {}
