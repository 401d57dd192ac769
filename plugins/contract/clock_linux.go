package contract

import (
	"syscall"
	"unsafe"
)

// clockMonotonic is Linux's CLOCK_MONOTONIC.
const clockMonotonic = 1

// Monotonic returns the machine's monotonic clock in nanoseconds: the same
// clock in every process of the machine (unlike the monotonic reading of
// time.Now, which counts from the process's start), never set back. It
// orders instants taken by the gateway and by its plugins (Request.Arrived).
func Monotonic() int64 {
	var ts syscall.Timespec
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return ts.Nano()
}
