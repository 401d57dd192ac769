//go:build wasip1

package module

import (
	"runtime"
	"runtime/debug"
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
// garbage collector keeps them (Go's collector does not move objects). Both are
// reused across calls unless they grew beyond keepBuffer, so a call with a
// small input and output allocates neither.
var (
	inBuf  []byte
	outBuf []byte
)

// keepBuffer is the largest buffer capacity kept from one call to the next.
const keepBuffer = 1 << 20

// defaultMemoryPages is the host's memory cap for a manifest that asks for
// none (sdk/ABI.md).
const defaultMemoryPages = 512

// configureRuntime gives the garbage collector a soft memory limit below the
// module's memory cap. Linear memory never shrinks and the collector only
// runs when the heap doubles (GOGC=100), so without a limit a model whose live
// heap is a third of the cap ran out of memory on its second call; with it, the
// collector works harder as the heap nears the cap instead.
func configureRuntime(l abi.Limits) {
	pages := l.MemoryPages
	if pages == 0 {
		pages = defaultMemoryPages
	}
	debug.SetMemoryLimit(int64(pages) * 65536 * 3 / 4)
}

// yield lets the garbage collector finish. A wasmexport call runs on one
// goroutine and returns to the host without scheduling others, so a GC cycle
// that an allocation started never completes while the guest only computes:
// without a yield the heap grows by every call's garbage until the module
// runs out of memory (pbpk-httk, 365 days, on its second call). Yielding runs the mark workers;
// when no cycle is pending it costs 2-3 µs. The SDK yields after the model
// ran, so its garbage can be freed before the output is encoded (encoding
// allocates about three times the output's size), and at the end of each call.
func yield() { runtime.Gosched() }

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
	if cap(outBuf) > keepBuffer {
		outBuf = nil // the previous result was read: let the collector have it during this call
	}
	if uint64(cap(inBuf)) < uint64(n)+1 || cap(inBuf) > keepBuffer {
		inBuf = make([]byte, n+1)
	}
	inBuf = inBuf[:n]
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(inBuf))))
}

//go:wasmexport toxgate_evaluate
func exportEvaluate(route, ptr, n uint32) uint64 {
	if cap(outBuf) > keepBuffer {
		outBuf = nil
	}
	out := append(outBuf[:0], 0) // status byte, set below
	var status byte
	if n > uint32(len(inBuf)) || (n > 0 && ptr != ptrOf(inBuf)) {
		status, out = errorBody(Internal("evaluate: input pointer %d was not returned by %s(%d)", ptr, abi.ExportAlloc, n), out)
	} else {
		status, out = evaluate(int(route), inBuf[:n], out)
	}
	out[0] = status
	outBuf = out
	yield()
	return abi.Pack(ptrOf(outBuf), uint32(len(outBuf)))
}
