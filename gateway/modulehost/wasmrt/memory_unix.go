//go:build linux || darwin || freebsd

package wasmrt

import (
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// reservedMemory backs a guest's linear memory with an address range
// reserved up to the memory's maximum (PROT_NONE) and made readable and
// writable as the guest grows it. Growing never copies: with wazero's
// default []byte memory every memory.grow past the capacity copies the whole
// memory, and a Go guest grows its heap a few MiB at a time (figures in
// gateway/modulehost/RATIONALE.md, "Why reserve guest memory?"). The
// range is outside the Go heap, so the host's garbage collector neither
// scans nor counts it, and untouched pages take no physical memory.
type reservedMemory struct {
	buf  []byte // the whole reservation
	size uint64 // bytes readable and writable
}

// reserve is the experimental.MemoryAllocator of every instance.
var reserve = experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
	b, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return &failedMemory{}
	}
	return &reservedMemory{buf: b}
})

// Reallocate makes the first size bytes usable; the contents stay in place.
func (m *reservedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	if size > m.size {
		if err := syscall.Mprotect(m.buf[m.size:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
		m.size = size
	}
	return m.buf[:size:size]
}

// Free releases the reservation.
func (m *reservedMemory) Free() {
	if m.buf != nil {
		_ = syscall.Munmap(m.buf)
		m.buf, m.size = nil, 0
	}
}

// failedMemory is a reservation the system refused: the instance fails to
// start (its minimum memory cannot be had) and the call gets an error.
type failedMemory struct{}

func (failedMemory) Reallocate(size uint64) []byte {
	if size == 0 {
		return []byte{}
	}
	return nil
}
func (failedMemory) Free() {}
