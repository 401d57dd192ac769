//go:build !wasm

package chem

import (
	"sync"
	"sync/atomic"
)

// The package keeps two kinds of state shared between calls: scratch memory
// reused from one molecule to the next, and caches of immutable entries. This
// file gives them their form for platforms with threads; shared_wasm.go gives
// the single-threaded form for Go's wasm port, where atomics and sync.Pool
// are function calls (runtime calls of several nested functions) rather than
// single instructions. The rest of the package uses only the methods below.

// scratchPool hands out scratch objects of type T, reused across calls.
type scratchPool[T any] struct{ p sync.Pool }

// get returns a scratch object (not zeroed: its slices keep their capacity).
func (p *scratchPool[T]) get() *T {
	if v, ok := p.p.Get().(*T); ok {
		return v
	}
	return new(T)
}

// put gives v back for reuse; the caller must not use it afterwards.
func (p *scratchPool[T]) put(v *T) { p.p.Put(v) }

// cacheSlot holds a pointer to an immutable cache entry; a miss replaces the
// whole entry. Loads and stores are atomic, so readers need no lock.
type cacheSlot[T any] struct{ p atomic.Pointer[T] }

func (s *cacheSlot[T]) load() *T   { return s.p.Load() }
func (s *cacheSlot[T]) store(v *T) { s.p.Store(v) }
