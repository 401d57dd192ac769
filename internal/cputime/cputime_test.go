//go:build unix

package cputime

import "testing"

// TestProcessCountsWork spins until the process has used 20 ms of CPU more
// than at the start, giving up after 10^10 steps (many seconds of work), and
// checks that the CPU time moved.
func TestProcessCountsWork(t *testing.T) {
	start := Process()
	if start <= 0 {
		t.Fatalf("Process() = %v at start, want > 0", start)
	}
	x := uint64(1)
	for round := 0; round < 100_000 && Process() < start+0.02; round++ {
		for range 100_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if got := Process(); got < start+0.02 {
		t.Fatalf("Process() = %v after seconds of work, started at %v (x=%d)", got, start, x)
	}
}
