package invitro

import (
	"math"
	"testing"
)

func TestUptakeReachesArmitageEquilibrium(t *testing.T) {
	o := DefaultOptions()
	for name, chem := range refChems {
		sys, _ := NewSystem(96, 0, 0, 0.1)
		r, err := Armitage(chem, 1, sys, o)
		if err != nil {
			t.Fatal(err)
		}
		u := NewUptake(chem, sys, r, o, DefaultKinetics())
		if !(u.Lambda > 0) {
			t.Fatalf("%s: λ = %g", name, u.Lambda)
		}
		start, end := u.At(0), u.At(50*u.HalfTimeH)
		if math.Abs(start.MediumFree-r.CwatS/(1-r.Xcells)) > 1e-9*start.MediumFree {
			t.Errorf("%s: free medium at t=0 %g, want all dissolved amount in the medium", name, start.MediumFree)
		}
		if rel := math.Abs(end.MediumFree-r.CwatS) / r.CwatS; rel > 1e-6 {
			t.Errorf("%s: free medium at equilibrium %g, Armitage %g", name, end.MediumFree, r.CwatS)
		}
		if rel := math.Abs(end.Cell-r.Ccells) / r.Ccells; rel > 1e-6 {
			t.Errorf("%s: cell conc. at equilibrium %g, Armitage %g", name, end.Cell, r.Ccells)
		}
		mid := u.At(u.HalfTimeH)
		if math.Abs(mid.Cell-r.Ccells/2) > 1e-9*r.Ccells {
			t.Errorf("%s: half-time cell conc. %g, want %g", name, mid.Cell, r.Ccells/2)
		}
	}
}
