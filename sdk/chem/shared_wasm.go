//go:build wasm

package chem

// Go's wasm port runs every goroutine on one thread and switches goroutines
// only inside calls that block, so the shared state of shared.go needs no
// atomics here: a pointer is always read and written whole, and get and put
// make no call between reading and writing the free list. The plain forms are
// what make them cheap (sync.Pool's Get and Put and an atomic load are each
// several calls in Go's wasm code; see README.md, "Performance").

// scratchPool hands out scratch objects of type T, reused across calls: a
// small free list (objects beyond it are left to the garbage collector).
type scratchPool[T any] struct {
	free [4]*T
	n    int
}

// get returns a scratch object (not zeroed: its slices keep their capacity).
func (p *scratchPool[T]) get() *T {
	if p.n > 0 {
		p.n--
		return p.free[p.n]
	}
	return new(T)
}

// put gives v back for reuse; the caller must not use it afterwards.
func (p *scratchPool[T]) put(v *T) {
	if p.n < len(p.free) {
		p.free[p.n] = v
		p.n++
	}
}

// cacheSlot holds a pointer to an immutable cache entry; a miss replaces the
// whole entry.
type cacheSlot[T any] struct{ p *T }

func (s *cacheSlot[T]) load() *T   { return s.p }
func (s *cacheSlot[T]) store(v *T) { s.p = v }

// wordSlot holds a cache entry of slotWords words, replaced whole on a miss,
// with no pointer for the garbage collector to follow.
type wordSlot struct{ w [slotWords]uint64 }

// lookup reports whether the entry equals key, but for the bits of word 0
// that mask selects, and returns the entry's word 0.
func (s *wordSlot) lookup(key *[slotWords]uint64, mask uint64) (uint64, bool) {
	w0 := s.w[0]
	if w0&^mask != key[0] {
		return 0, false
	}
	for i := 1; i < slotWords; i++ {
		if s.w[i] != key[i] {
			return 0, false
		}
	}
	return w0, true
}

// store replaces the entry with src.
func (s *wordSlot) store(src *[slotWords]uint64) {
	for i := range src {
		s.w[i] = src[i]
	}
}
