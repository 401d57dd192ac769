//go:build !wasm

package chem

import (
	"sync"
	"sync/atomic"
)

// The package keeps two kinds of state shared between calls: scratch memory
// reused from one molecule to the next, and caches of immutable entries
// (pointers to them, or entries of a few words kept in the slot). This
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

// wordSlot holds a cache entry of slotWords words, replaced whole on a miss,
// with no pointer for the garbage collector to follow. A sequence lock makes
// it safe without a lock for readers: a reader misses when a write overlaps
// its read, and a writer gives up when another is writing.
type wordSlot struct {
	seq atomic.Uint32 // odd while a write is in progress
	w   [slotWords]atomic.Uint64
}

// lookup reports whether the entry equals key, but for the bits of word 0
// that mask selects, and returns the entry's word 0; false also when a write
// overlapped.
func (s *wordSlot) lookup(key *[slotWords]uint64, mask uint64) (uint64, bool) {
	v := s.seq.Load()
	if v&1 != 0 {
		return 0, false
	}
	w0 := s.w[0].Load()
	if w0&^mask != key[0] {
		return 0, false
	}
	for i := 1; i < slotWords; i++ {
		if s.w[i].Load() != key[i] {
			return 0, false
		}
	}
	return w0, s.seq.Load() == v
}

// store replaces the entry with src, unless another write is in progress.
func (s *wordSlot) store(src *[slotWords]uint64) {
	v := s.seq.Load()
	if v&1 != 0 || !s.seq.CompareAndSwap(v, v+1) {
		return
	}
	for i := range src {
		s.w[i].Store(src[i])
	}
	s.seq.Store(v + 2)
}
