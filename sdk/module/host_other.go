//go:build !wasip1

package module

import (
	"fmt"
	"os"

	"toxgate/sdk/abi"
)

// hostLog prints to stderr when the package runs natively (e.g. in an author's tests).
func hostLog(level int32, line []byte) { fmt.Fprintf(os.Stderr, "level=%d %s\n", level, line) }

// configureRuntime leaves a native process's garbage collector alone.
func configureRuntime(abi.Limits) {}

// yield does nothing natively: the garbage collector runs on its own threads.
func yield() {}
