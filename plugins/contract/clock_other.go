//go:build !linux

package contract

// Monotonic returns 0 here: no clock shared by the machine's processes is
// read on this system, so Request.Arrived stays unknown and a plugin's
// freshness check waits for a check that starts after the call reaches it.
func Monotonic() int64 { return 0 }
