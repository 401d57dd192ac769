//go:build wasip1

package module

import (
	"unsafe"

	"toxgate/sdk/abi"
)

//go:wasmimport toxgate log
func hostLogImport(level int32, ptr unsafe.Pointer, n uint32)

func hostLog(level int32, line []byte) {
	if len(line) == 0 {
		return
	}
	hostLogImport(level, unsafe.Pointer(&line[0]), uint32(len(line)))
}

// Buffers handed to the host stay referenced here until the next call, so the
// garbage collector keeps them (Go's collector does not move objects).
var (
	inBuf  []byte
	outBuf []byte
)

func ptrOf(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&b[0])))
}

//go:wasmexport toxgate_abi_version
func exportABIVersion() int32 { return abi.Version }

//go:wasmexport toxgate_manifest
func exportManifest() uint64 {
	return abi.Pack(ptrOf(manifestJSON), uint32(len(manifestJSON)))
}

//go:wasmexport toxgate_alloc
func exportAlloc(n uint32) uint32 {
	inBuf = make([]byte, n+1)[:n]
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(inBuf))))
}

//go:wasmexport toxgate_evaluate
func exportEvaluate(route, ptr, n uint32) uint64 {
	var status byte
	var body []byte
	if n > uint32(len(inBuf)) || (n > 0 && ptr != ptrOf(inBuf)) {
		status, body = errorBody(Internal("evaluate: input pointer %d was not returned by %s(%d)", ptr, abi.ExportAlloc, n))
	} else {
		status, body = evaluate(int(route), inBuf[:n])
	}
	if cap(outBuf) > 1<<20 {
		outBuf = nil // do not keep a huge buffer alive between calls
	}
	outBuf = append(append(outBuf[:0], status), body...)
	inBuf = nil
	return abi.Pack(ptrOf(outBuf), uint32(len(outBuf)))
}
