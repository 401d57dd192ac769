//go:build linux || darwin || freebsd

package wasmrt

import (
	"testing"
	"unsafe"
)

// A reserved memory grows in place, keeps its contents, is zero where new,
// and refuses to grow past its maximum.
func TestReservedMemoryGrowsInPlace(t *testing.T) {
	m := reserve.Allocate(0, 1<<20)
	defer m.Free()
	a := m.Reallocate(64 << 10)
	if len(a) != 64<<10 {
		t.Fatalf("len %d", len(a))
	}
	a[0], a[len(a)-1] = 7, 9
	b := m.Reallocate(256 << 10)
	if len(b) != 256<<10 || unsafe.SliceData(a) != unsafe.SliceData(b) || b[0] != 7 || b[64<<10-1] != 9 || b[64<<10] != 0 || b[len(b)-1] != 0 {
		t.Fatal("grown memory moved or lost its contents")
	}
	if m.Reallocate(2<<20) != nil {
		t.Fatal("grew past the maximum")
	}
}
