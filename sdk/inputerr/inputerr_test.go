package inputerr

import "testing"

func TestErrorText(t *testing.T) {
	e := New("chem_name", "unknown chemical %q", "Bisfenol A")
	e.Suggestions = []string{"Bisphenol-A", "Bisphenol AF"}
	want := `chem_name: unknown chemical "Bisfenol A" (closest: Bisphenol-A; Bisphenol AF)`
	if e.Error() != want {
		t.Fatalf("got %q, want %q", e.Error(), want)
	}
	e = New("species", "no data")
	e.Missing = []string{"Mouse.Clint"}
	if e.Error() != "species: no data (missing: Mouse.Clint)" {
		t.Fatalf("got %q", e.Error())
	}
}
