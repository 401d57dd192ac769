package invitro

import "math"

// Kinetic constants of cell uptake; DefaultKinetics gives the documented values.
type Kinetics struct {
	// LogPermOffset: log10 membrane permeability of the neutral form (m/s) is
	// logKow + LogPermOffset (Trapp 2004: −6.7).
	LogPermOffset float64
	// IonPermFactor scales the permeability of ions (Trapp 2004: 10^−3.5).
	IonPermFactor float64
	// DiffusivityM2s is the aqueous diffusivity of the solute (m²/s) through the
	// unstirred medium column above the cell layer.
	DiffusivityM2s float64
}

// DefaultKinetics returns the uptake constants used by the TK modules.
func DefaultKinetics() Kinetics {
	return Kinetics{LogPermOffset: -6.7, IonPermFactor: math.Pow(10, -3.5), DiffusivityM2s: 5e-10}
}

// Uptake is first-order cell uptake towards the Armitage equilibrium: the
// medium (water, serum, plastic, headspace, all at mutual equilibrium) and the
// cells exchange through a series of two resistances, the unstirred medium
// column (D/h over the well bottom) and the cell membrane (P over the cell
// surface):
//
//	dA_cell/dt = k·(C_w − A_cell/(K_cw·V_cells)),  C_w = (M − A_cell)/V_med
//
// so that A_cell(t) = A_eq·(1 − e^(−λt)) with λ = k·(1/V_med + 1/(K_cw·V_cells))
// and A_eq the Armitage cell amount.
type Uptake struct {
	KLh        float64 `json:"k_L_per_h"`         // exchange clearance k, L/h
	Lambda     float64 `json:"lambda_per_h"`      // approach rate λ, 1/h
	HalfTimeH  float64 `json:"half_time_h"`       // ln2/λ, h
	PermMs     float64 `json:"membrane_perm_m_s"` // effective membrane permeability
	AqPermMs   float64 `json:"aqueous_perm_m_s"`  // D/h of the medium column
	CellAreaM2 float64 `json:"cell_surface_m2"`   // surface of one cell
	VMedL      float64 `json:"medium_capacity_L"` // V_med (water-equivalent)
	VCellL     float64 `json:"cell_capacity_L"`   // K_cw·V_cells
	MDissolved float64 `json:"dissolved_umol"`    // M, µmol not precipitated
	mediumWB   float64 // water-equivalent volume of the medium liquid (water+serum)
	vBulk      float64 // medium volume, L
	vCells     float64 // cell volume, L
}

// NewUptake derives the uptake kinetics of chem in sys from an Armitage result.
func NewUptake(chem Chemical, sys System, r Result, o Options, k Kinetics) Uptake {
	p, v := r.Partition, r.Volumes
	ion := Ionize(o.MediumPH, ParsePKa(chem.PKaDonor, chem.PKaAccept))
	fPerm := ion.Neutral + ion.Zwitter
	pn := math.Pow(10, chem.LogP+k.LogPermOffset)
	perm := fPerm*pn + (1-fPerm)*pn*k.IonPermFactor
	cellVolM3 := o.CellMass * 1e-12 / o.CellDensity / 1000 // ng → kg; kg/(kg/L) → L → m³
	radius := math.Cbrt(3 * cellVolM3 / (4 * math.Pi))
	cellArea := 4 * math.Pi * radius * radius
	heightM := sys.Well.MediumHeightMM(sys.VWorkingUL) / 1000
	aq := k.DiffusivityM2s / heightM
	bottomM2 := sys.Well.BottomMM2 / 1e6
	mem := perm * cellArea * sys.CellYield // m³/s
	wat := aq * bottomM2
	kLh := 0.0
	if mem > 0 && wat > 0 {
		kLh = 1 / (1/mem + 1/wat) * 1000 * 3600
	}
	liquid := v.Water + p.Kbsa*v.Alb + o.PCells*p.Kow*v.Slip + p.Kow*o.PDom*o.FOC*v.Dom
	vmed := liquid + p.Kaw*v.Air + p.Kpl*sys.SAreaM2*1000
	vcell := p.Kcw * v.Cells
	u := Uptake{KLh: kLh, PermMs: perm, AqPermMs: aq, CellAreaM2: cellArea, VMedL: vmed, VCellL: vcell,
		MDissolved: r.Mtot * (1 - r.Xprecip), mediumWB: liquid, vBulk: v.Bulk, vCells: v.Cells}
	if vcell > 0 {
		u.Lambda = kLh * (1/vmed + 1/vcell)
	}
	if u.Lambda > 0 {
		u.HalfTimeH = math.Ln2 / u.Lambda
	}
	return u
}

// State is the distribution at one time.
type State struct {
	TimeH        float64 `json:"time_h"`
	MediumFree   float64 `json:"medium_free_uM"`    // freely dissolved, µM
	MediumTotal  float64 `json:"medium_total_uM"`   // dissolved + serum-bound per medium volume, µM
	Cell         float64 `json:"cell_uM"`           // per cell volume, µM
	CellMeanToT  float64 `json:"cell_mean_uM"`      // time-averaged cell concentration over [0, t], µM
	FractionCell float64 `json:"fraction_in_cells"` // of the dissolved amount
}

// At returns the state at time t (h) after dosing the medium at t = 0.
func (u Uptake) At(t float64) State {
	if u.vCells == 0 || u.VCellL == 0 {
		cw := u.MDissolved / u.VMedL
		return State{TimeH: t, MediumFree: cw, MediumTotal: cw * u.mediumWB / u.vBulk}
	}
	aeq := u.MDissolved * u.VCellL / (u.VCellL + u.VMedL)
	e := math.Exp(-u.Lambda * t)
	a := aeq * (1 - e)
	mean := 0.0
	if t > 0 && u.Lambda > 0 {
		mean = aeq * (1 - (1-e)/(u.Lambda*t))
	}
	cw := (u.MDissolved - a) / u.VMedL
	return State{TimeH: t, MediumFree: cw, MediumTotal: cw * u.mediumWB / u.vBulk,
		Cell: a / u.vCells, CellMeanToT: mean / u.vCells, FractionCell: a / u.MDissolved}
}
