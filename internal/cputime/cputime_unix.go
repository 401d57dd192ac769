//go:build unix

package cputime

import "syscall"

// Process returns the user and system CPU seconds this process has used so
// far, or 0 if the system does not say.
func Process() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
