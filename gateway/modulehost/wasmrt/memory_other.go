//go:build !(linux || darwin || freebsd)

package wasmrt

import "github.com/tetratelabs/wazero/experimental"

// reserve is nil on other systems: wazero's own []byte memory.
var reserve experimental.MemoryAllocator
