package invitro

import (
	"math"
	"testing"
)

// Physico-chemical inputs of httk 2.7.4 chem.physical_and_invitro.data.
var refChems = map[string]Chemical{
	"ROT":   {Name: "Rotenone", MW: 394.4, LogP: 4.098, LogHenry: -8.742, LogWSol: -4.888, MP: 176, PKaDonor: "14"},
	"AMI":   {Name: "Amiodarone", MW: 645.3, LogP: 7.568, LogHenry: -5.981, LogWSol: -5.261, MP: 103.8, PKaAccept: "8.47"},
	"DOX":   {Name: "Doxorubicin", MW: 543.5, LogP: 1.27, LogHenry: -10.77, LogWSol: -1.093, MP: 230, PKaDonor: "8,9.93,12.7,13.5,14.1", PKaAccept: "9.93"},
	"TBBPA": {Name: "TBBPA", MW: 543.9, LogP: 6.663, LogHenry: -7.753, LogWSol: -5.749, MP: 180.9, PKaDonor: "6.57,7.18"},
}

// Reference values of httk 2.7 armitage_eval(nomconc=1, this.well_number=96,
// this.FBSf=f) with all other arguments at their defaults. Derivation: the
// equations of R/armitage.R (httk 2.7: nlom 0.05, cell pH 7.4, medium pH 7.0,
// anionic lipid 0.175 ×20/×0.05, lysosome VF 0.0068, 500 nm, 7 nm membrane,
// pH 5.1) evaluated by hand in a separate script (Python, double precision)
// for the 96-well flat-bottom well (150 µL of 360 µL, 32 000 cells,
// sarea = 2π·3.2·4.6627 + π·3.2² mm² = 1.25920e-4 m²). Cell ionisation types
// from httk calc_ionization at pH 7.4: ROT neutral, AMI base (f+ 0.9216),
// DOX base (f+ 0.7988, rest zwitterion), TBBPA acid (f− 0.9473).
var refValues = []struct {
	cpd                    string
	fbsf                   float64
	kcw, cfree, xcell, xpl float64
}{
	{"ROT", 0, 923.71, 0.385668, 0.227997, 0.386335},
	{"AMI", 0, 1.81727e6, 0.00027743, 0.322666, 0.677056},
	{"DOX", 0, 0.935496, 0.997666, 0.00059732, 0.00173623},
	{"TBBPA", 0, 113441, 0.0025452, 0.184787, 0.812668},
	{"ROT", 0.1, 923.71, 0.115671, 0.0683818, 0.115871},
	{"AMI", 0.1, 1.81727e6, 9.25437e-05, 0.107633, 0.225849},
	{"DOX", 0.1, 0.935496, 0.959517, 0.000574479, 0.00166984},
	{"TBBPA", 0.1, 113441, 0.000710879, 0.0516114, 0.22698},
}

func TestArmitageReproducesHttk(t *testing.T) {
	for _, ref := range refValues {
		sys, err := NewSystem(96, 0, 0, ref.fbsf)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Armitage(refChems[ref.cpd], 1, sys, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"DR_kcw", r.Partition.Kcw, ref.kcw}, {"cfree.invitro", r.CwatS, ref.cfree},
			{"xcells", r.Xcells, ref.xcell}, {"xplastic", r.Xplastic, ref.xpl}} {
			if rel := math.Abs(c.got-c.want) / c.want; rel > 1e-4 {
				t.Errorf("%s FBSf=%g %s = %.6g, httk %.6g (rel. diff %.2g)", ref.cpd, ref.fbsf, c.name, c.got, c.want, rel)
			}
		}
		total := r.Xwat + r.Xair + r.Xbsa + r.Xslip + r.Xdom + r.Xcells + r.Xplastic + r.Xprecip
		if math.Abs(total-1) > 1e-9 {
			t.Errorf("%s: fractions sum to %g", ref.cpd, total)
		}
	}
}

func TestPlasticArea96(t *testing.T) {
	w, _ := WellFor(96)
	if got := w.PlasticArea(150); math.Abs(got-1.2592e-4) > 1e-8 {
		t.Errorf("sarea = %g m², want 1.2592e-4", got)
	}
}

func TestIonizeDoxorubicin(t *testing.T) {
	ion := Ionize(7.4, ParsePKa("8,9.93,12.7,13.5,14.1", "9.93"))
	if ion.Neutral != 0 || math.Abs(ion.Positive-0.7988) > 1e-4 {
		t.Errorf("DOX at pH 7.4: %+v, want neutral 0, positive 0.7988", ion)
	}
}

func TestNewSystemRejects(t *testing.T) {
	if _, err := NewSystem(100, 0, 0, 0); err == nil {
		t.Error("100-well plate accepted")
	}
	if _, err := NewSystem(96, 400, 0, 0); err == nil {
		t.Error("medium volume above the well volume accepted")
	}
	if _, err := NewSystem(96, 0, 0, 1.5); err == nil {
		t.Error("serum fraction 1.5 accepted")
	}
}
