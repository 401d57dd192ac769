package model

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

func reference() Input { return Input{DoseMg: f(60), Age: f(50), Weight: f(70), Height: f(190)} }

// Perez-Blanco et al. 2016 (Br J Clin Pharmacol, doi 10.1111/bcp.13070):
// CL 62.4 L/h; AUC∞ = dose/CL within 30 %, terminal t½ 20–50 h.
func TestClinicalValidation(t *testing.T) {
	out, err := Simulate(reference())
	if err != nil {
		t.Fatal(err)
	}
	s := out.Summary
	if math.Abs(out.Physiology.BSA-1.962) > 0.001 {
		t.Errorf("BSA %.4f m², want 1.962 (Du Bois)", out.Physiology.BSA)
	}
	if math.Abs(s.DoseMgTotal-117.7) > 0.1 {
		t.Errorf("dose %.2f mg, want 117.7", s.DoseMgTotal)
	}
	want := s.DoseMgTotal / 62.4
	if r := s.AUCInfMgHPerL / want; r < 0.7 || r > 1.3 {
		t.Errorf("AUC∞ %.3f mg·h/L, want %.3f ± 30%%", s.AUCInfMgHPerL, want)
	}
	if s.TerminalHalfLifeH < 20 || s.TerminalHalfLifeH > 50 {
		t.Errorf("terminal half-life %.1f h, want 20–50 h", s.TerminalHalfLifeH)
	}
	if s.TmaxH > 0.05+1e-9 || s.CmaxNgPerML <= 0 {
		t.Errorf("Cmax %.0f ng/mL at %.3f h: expected at the end of the 3-min infusion", s.CmaxNgPerML, s.TmaxH)
	}
	t.Logf("AUC∞ %.3f mg·h/L (dose/62.4 L/h = %.3f), t½ %.1f h, CL %.1f L/h, Cmax %.0f ng/mL, heart AUC %.1f mg·h/L",
		s.AUCInfMgHPerL, want, s.TerminalHalfLifeH, s.ClearanceLPerH, s.CmaxNgPerML, s.HeartAUCMgHPerL)
	if s.MassBalanceError > 1e-6 {
		t.Errorf("mass balance relative error %.2g", s.MassBalanceError)
	}
	dir := os.Getenv("PLOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, "doxorubicin.svg"), []byte(out.PlotSVG), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"plasma", "heart", "heart, DNA-bound", "liver", "C<tspan", "max</tspan>"} {
		if !strings.Contains(out.PlotSVG, name) {
			t.Errorf("plot lacks %s", name)
		}
	}
}

func TestAgeAndWeightChangePhysiology(t *testing.T) {
	young, _ := Simulate(Input{DoseMg: f(60), Age: f(25), Weight: f(70), Height: f(190)})
	old, _ := Simulate(Input{DoseMg: f(60), Age: f(80), Weight: f(70), Height: f(190)})
	if !(young.Physiology.CardiacOutput > old.Physiology.CardiacOutput) {
		t.Errorf("cardiac output should fall with age: %g (25 y) vs %g (80 y)", young.Physiology.CardiacOutput, old.Physiology.CardiacOutput)
	}
	heavy, _ := Simulate(Input{DoseMg: f(60), Age: f(50), Weight: f(100), Height: f(190)})
	ref, _ := Simulate(reference())
	if !(heavy.Physiology.Volumes["muscle"] > ref.Physiology.Volumes["muscle"]) {
		t.Error("organ volumes should scale with weight")
	}
}

func TestLongerInfusionLowersCmax(t *testing.T) {
	in := reference()
	in.InfusionH = f(0.5)
	slow, err := Simulate(in)
	if err != nil {
		t.Fatal(err)
	}
	fast, _ := Simulate(reference())
	if !(slow.Summary.CmaxNgPerML < fast.Summary.CmaxNgPerML/2) {
		t.Errorf("Cmax 0.5 h %.0f vs 3 min %.0f", slow.Summary.CmaxNgPerML, fast.Summary.CmaxNgPerML)
	}
	if math.Abs(slow.Summary.TmaxH-0.5) > 0.011 || slow.Summary.MassBalanceError > 1e-6 {
		t.Errorf("Tmax %.2f h, mass balance %.2g", slow.Summary.TmaxH, slow.Summary.MassBalanceError)
	}
}

func TestBadInputNamesTheField(t *testing.T) {
	cases := map[string]Input{
		"dose_mg":    {DoseMg: f(-60), Age: f(50), Weight: f(70), Height: f(190)},
		"age":        {DoseMg: f(60), Weight: f(70), Height: f(190)},
		"weight":     {DoseMg: f(60), Age: f(50), Weight: f(0), Height: f(190)},
		"height":     {DoseMg: f(60), Age: f(50), Weight: f(70), Height: f(1900)},
		"days":       {DoseMg: f(60), Age: f(50), Weight: f(70), Height: f(190), Days: f(0)},
		"infusion_h": {DoseMg: f(60), Age: f(50), Weight: f(70), Height: f(190), InfusionH: f(-1)},
	}
	for field, in := range cases {
		_, err := Simulate(in)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != field {
			t.Errorf("%s: got %v", field, err)
		}
	}
	_, err := Decode([]byte(`{"dose_mg":"60","age":50,"weight":70,"height":190}`))
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "dose_mg" {
		t.Errorf("wrong type: got %v", err)
	}
}

func BenchmarkDoxorubicin7Days(b *testing.B) {
	in := reference()
	for b.Loop() {
		if _, err := Simulate(in); err != nil {
			b.Fatal(err)
		}
	}
}

// The analytic Jacobian agrees with central differences of deriv, at states
// with the DNA binding far from and near saturation.
func TestJacobianMatchesDifferences(t *testing.T) {
	ph := newPhysiology(50, 70, 190)
	for _, scale := range []float64{1e-3, 1, 1e3} {
		y := make([]float64, nStates)
		for i := range y {
			y[i] = scale * (1 + 0.1*float64(i))
		}
		jac := make([]float64, nStates*nStates)
		ph.jacobian(0, y, jac)
		fp, fm := make([]float64, nStates), make([]float64, nStates)
		for j := 0; j < nStates; j++ {
			h := 1e-6 * math.Max(1, math.Abs(y[j]))
			yj := y[j]
			y[j] = yj + h
			ph.deriv(0, y, fp)
			y[j] = yj - h
			ph.deriv(0, y, fm)
			y[j] = yj
			for i := 0; i < nStates; i++ {
				fd := (fp[i] - fm[i]) / (2 * h)
				if a := jac[i*nStates+j]; math.Abs(a-fd) > 1e-6*(math.Abs(a)+math.Abs(fd))+1e-9 {
					t.Errorf("scale %g: J[%d][%d] = %g, differences %g", scale, i, j, a, fd)
				}
			}
		}
	}
}

// AppendJSON (the module's output, a RawJSON) is byte for byte json.Marshal.
func TestAppendJSONIsMarshal(t *testing.T) {
	for _, in := range []Input{reference(), {DoseMg: f(30), Age: f(70), Weight: f(55), Height: f(160), InfusionH: f(1), Days: f(2)}} {
		out, err := Simulate(in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := out.AppendJSON([]byte("x"))
		if err != nil || string(got[1:]) != string(want) || got[0] != 'x' {
			t.Fatalf("AppendJSON differs from json.Marshal (%d vs %d bytes), %v", len(got)-1, len(want), err)
		}
	}
}
