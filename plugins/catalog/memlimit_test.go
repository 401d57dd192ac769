package main

import (
	"io"
	"log/slog"
	"math"
	"runtime/debug"
	"testing"
)

// A positive catalog.memory_limit becomes the process's soft memory
// limit; 0 leaves the runtime's (none).
func TestApplyMemoryLimit(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	debug.SetMemoryLimit(math.MaxInt64)
	applyMemoryLimit(log, 0)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("limit %d after 0, want none", got)
	}
	applyMemoryLimit(log, 3<<30)
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Fatalf("limit %d, want %d", got, 3<<30)
	}
}
