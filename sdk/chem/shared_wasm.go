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
	// One comparison of all six words, read without branches in between:
	// one bounds check covers the reads in a wasm module.
	w := &s.w
	w0 := w[0]
	d := w0&^mask ^ key[0] | w[1] ^ key[1] | w[2] ^ key[2] | w[3] ^ key[3] | w[4] ^ key[4] | w[5] ^ key[5]
	return w0, d == 0
}

// slotWords must be 6 for lookup above.
var _ = [1]struct{}{}[slotWords-6]

// store replaces the entry with src.
func (s *wordSlot) store(src *[slotWords]uint64) {
	for i := range src {
		s.w[i] = src[i]
	}
}
