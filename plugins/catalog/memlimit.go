package main

import (
	"log/slog"
	"runtime/debug"
)

// applyMemoryLimit sets the process's soft memory limit to n bytes
// (catalog.memory_limit) when n is positive: the collector then runs more
// often as the heap nears n rather than letting it grow to twice the live
// data (GOGC's default). A limit below the live data makes the collector
// run often, within the runtime's own bound on its share of the CPU; it
// never fails an allocation.
func applyMemoryLimit(log *slog.Logger, n int64) {
	if n <= 0 {
		return
	}
	debug.SetMemoryLimit(n)
	log.Info("catalog plugin memory limit", "bytes", n)
}
