package invitro

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Chemical holds the physico-chemical inputs of the model, as in httk's
// chem.physical_and_invitro.data.
type Chemical struct {
	Name      string  `json:"name"`
	CAS       string  `json:"cas"`
	DTXSID    string  `json:"dtxsid"`
	MW        float64 `json:"MW"`        // g/mol
	LogP      float64 `json:"logP"`      // log10 octanol:water partition coefficient
	LogHenry  float64 `json:"logHenry"`  // log10 Henry's law constant, atm·m³/mol
	LogWSol   float64 `json:"logWSol"`   // log10 water solubility, mol/L
	MP        float64 `json:"MP"`        // melting point, °C (NaN when unknown)
	PKaDonor  string  `json:"pKa_Donor"` // httk list, e.g. "6.57,7.18"
	PKaAccept string  `json:"pKa_Accept"`
}

// System is one well as tested: geometry, medium, cells and serum.
type System struct {
	Well       Well    `json:"well"`
	VWorkingUL float64 `json:"v_working_uL"` // medium volume, µL
	VTotalUL   float64 `json:"v_total_uL"`   // well volume, µL
	CellYield  float64 `json:"cell_yield"`   // cells per well
	SAreaM2    float64 `json:"sarea_m2"`     // plastic area in contact with medium, m²
	FBSf       float64 `json:"FBSf"`         // volume fraction of fetal bovine serum
}

// NewSystem returns the httk default system of a plate format; zero vWorkingUL
// or cellYield take the format's defaults. The plastic area follows the medium
// volume as in armitage_estimate_sarea.
func NewSystem(format int, vWorkingUL, cellYield, fbsf float64) (System, error) {
	w, err := WellFor(format)
	if err != nil {
		return System{}, err
	}
	if vWorkingUL == 0 {
		vWorkingUL = w.VWorkingUL
	}
	if cellYield == 0 {
		cellYield = w.CellYield
	}
	if vWorkingUL < 0 || vWorkingUL >= w.VTotalUL {
		return System{}, fmt.Errorf("medium volume %g µL must be positive and below the well volume %g µL", vWorkingUL, w.VTotalUL)
	}
	if cellYield < 0 {
		return System{}, errors.New("cell number must not be negative")
	}
	if fbsf < 0 || fbsf > 1 {
		return System{}, fmt.Errorf("serum fraction %g must be within 0–1", fbsf)
	}
	return System{Well: w, VWorkingUL: vWorkingUL, VTotalUL: w.VTotalUL, CellYield: cellYield,
		SAreaM2: w.PlasticArea(vWorkingUL), FBSf: fbsf}, nil
}

// Options are the model constants; DefaultOptions gives httk 2.7's defaults.
type Options struct {
	TsysC, TrefK          float64 // system temperature (°C), reference temperature (K)
	Pseudooct, Memblip    float64 // storage-lipid and membrane-lipid fractions of cells
	Nlom, PNlom           float64 // structural protein fraction; its octanol equivalence
	PDom, PCells          float64 // DOM and storage-lipid octanol equivalence
	CellPH, MediumPH      float64 // intracellular and medium pH
	AnionicVF             float64 // anionic fraction of membrane phospholipid
	APropAcid, APropBase  float64 // sorption multipliers of ions to anionic lipid
	LysoVF, LysoDiamNM    float64 // lysosome volume fraction and diameter (nm)
	LysoMembraneNM        float64 // lysosome membrane thickness (nm)
	LysoPH                float64 // lysosomal pH
	Csalt                 float64 // ionic strength, mol/L
	CellDensity, CellMass float64 // kg/L; ng per cell
	FOC                   float64 // DOM treated like protein
	ConcSerAlb, ConcSerLp float64 // albumin and lipid in serum, g/L
	VdomUL                float64 // dissolved organic matter volume, µL
	KBSA2, KPL2           bool    // alternative albumin and plastic spLFERs
	RestrictIon           bool    // only the neutral form partitions in the medium
}

// DefaultOptions returns httk 2.7 armitage_eval's defaults.
func DefaultOptions() Options {
	return Options{
		TsysC: 37, TrefK: 298.15,
		Pseudooct: 0.01, Memblip: 0.04, Nlom: 0.05, PNlom: 0.035, PDom: 0.05, PCells: 1,
		CellPH: 7.4, MediumPH: 7.0,
		AnionicVF: 0.175, APropAcid: 0.05, APropBase: 20,
		LysoVF: 0.0068, LysoDiamNM: 500, LysoMembraneNM: 7, LysoPH: 5.1,
		Csalt: 0.15, CellDensity: 1, CellMass: 3, FOC: 1,
		ConcSerAlb: 24, ConcSerLp: 1.9,
	}
}

// Partition holds the distribution ratios (temperature- and salt-corrected) used
// in the mass balance.
type Partition struct {
	Kaw  float64 `json:"DR_kaw"`  // air:water
	Kow  float64 `json:"DR_kow"`  // octanol:water (serum lipid)
	Kbsa float64 `json:"DR_kbsa"` // albumin:water
	Kpl  float64 `json:"DR_kpl"`  // plastic:water, m³/m²
	Kcw  float64 `json:"DR_kcw"`  // cell:water
	Swat float64 `json:"DR_swat"` // solubility limit as httk compares it (mg/L; see card)
	// CellType is httk's IOC_Type_cell: Neutral, Base or Acid at the cell pH.
	CellType string     `json:"IOC_type_cell"`
	CellIon  Ionization `json:"ionization_cell"`
	LysoPump float64    `json:"lyso_pump"`
	IOCMult  float64    `json:"ioc_mult"`
}

// Volumes are the compartment volumes of the well, L.
type Volumes struct {
	Bulk  float64 `json:"Vbm"`    // medium
	Water float64 `json:"Vm"`     // aqueous medium
	Alb   float64 `json:"Valb"`   // serum albumin
	Slip  float64 `json:"Vslip"`  // serum lipid
	Dom   float64 `json:"Vdom"`   // dissolved organic matter
	Cells float64 `json:"Vcells"` // cells
	Air   float64 `json:"Vair"`   // headspace
	Well  float64 `json:"Vwell"`  // well
}

// Result is the equilibrium distribution (armitage_eval's output columns).
type Result struct {
	Nomconc   float64   `json:"nomconc_uM"`
	Partition Partition `json:"partition"`
	Volumes   Volumes   `json:"volumes_L"`
	Mtot      float64   `json:"mtot_umol"`
	Cwat      float64   `json:"cwat_uM"`
	CwatS     float64   `json:"cwat_s_uM"` // free concentration = cfree.invitro
	Csat      bool      `json:"csat"`
	Activity  float64   `json:"activity"`
	Cair      float64   `json:"cair_uM"`
	Calb      float64   `json:"calb_uM"`
	Cslip     float64   `json:"cslip_uM"`
	Ccells    float64   `json:"ccells_uM"`
	Cplastic  float64   `json:"cplastic_umol_m2"`
	// Fractions of the total amount.
	Xwat, Xair, Xbsa, Xslip, Xdom, Xcells, Xplastic, Xprecip float64
	EtaFree                                                  float64 `json:"eta_free"`
}

// Armitage evaluates the in-vitro distribution of chem at nominal concentration
// nomconc (µM) in sys, following httk 2.7 armitage_eval step by step.
func Armitage(chem Chemical, nomconc float64, sys System, o Options) (Result, error) {
	if !(nomconc > 0) || math.IsInf(nomconc, 0) {
		return Result{}, fmt.Errorf("nominal concentration %g µM must be positive", nomconc)
	}
	if chem.MW <= 0 || math.IsNaN(chem.LogP) || math.IsNaN(chem.LogHenry) || math.IsNaN(chem.LogWSol) {
		return Result{}, fmt.Errorf("%s lacks MW, logP, logHenry or logWSol", chem.Name)
	}
	p := Partitions(chem, o)
	v := volumes(sys, o)
	r := Result{Nomconc: nomconc, Partition: p, Volumes: v}
	r.Mtot = nomconc * v.Bulk
	r.Cwat = r.Mtot / (p.Kaw*v.Air + v.Water + p.Kbsa*v.Alb + o.PCells*p.Kow*v.Slip +
		p.Kow*o.PDom*o.FOC*v.Dom + p.Kcw*v.Cells + p.Kpl*sys.SAreaM2*1000)
	r.CwatS = r.Cwat
	if r.Cwat > p.Swat {
		r.CwatS, r.Csat = p.Swat, true
	}
	r.Activity = r.CwatS / swatLiquid(chem, p.Swat, o)
	if v.Air > 0 {
		r.Cair = p.Kaw * r.CwatS
	}
	if v.Alb > 0 {
		r.Calb = p.Kbsa * r.CwatS
	}
	if v.Slip > 0 {
		r.Cslip = p.Kow * r.CwatS * o.PCells
	}
	cdom := 0.0
	if v.Dom > 0 {
		cdom = p.Kow * r.CwatS * o.PDom * o.FOC
	}
	if v.Cells > 0 {
		r.Ccells = p.Kcw * r.CwatS
	}
	r.Cplastic = p.Kpl * r.CwatS * 1000
	m := [...]float64{r.CwatS * v.Water, r.Cair * v.Air, r.Calb * v.Alb, r.Cslip * v.Slip,
		cdom * v.Dom, r.Ccells * v.Cells, r.Cplastic * sys.SAreaM2}
	var sum float64
	for _, x := range m {
		sum += x
	}
	r.Xwat, r.Xair, r.Xbsa, r.Xslip = m[0]/r.Mtot, m[1]/r.Mtot, m[2]/r.Mtot, m[3]/r.Mtot
	r.Xdom, r.Xcells, r.Xplastic = m[4]/r.Mtot, m[5]/r.Mtot, m[6]/r.Mtot
	if r.Csat {
		r.Xprecip = (r.Mtot - sum) / r.Mtot
	}
	r.EtaFree = r.CwatS / nomconc
	return r, nil
}

// tcor is httk's van 't Hoff temperature term (1/Tsys − 1/Tref)/(2.303·R).
func tcor(o Options) float64 {
	const R = 8.3144621
	return (1/(o.TsysC+273.15) - 1/o.TrefK) / (2.303 * R)
}

const (
	duow = -20000.0 // internal energy of octanol-water transfer, J/mol
	duaw = 60000.0  // internal energy of air-water transfer, J/mol
)

// Partitions computes the distribution ratios of chem (httk 2.7 spLFERs,
// ionised-form scaling factors, salting out, cell ionisation and trapping).
func Partitions(chem Chemical, o Options) Partition {
	tc := tcor(o)
	gkow := chem.LogP
	gkmw := 1.01*gkow + 0.12 // Endo 2011
	var gkbsa float64
	switch {
	case o.KBSA2 && gkow < 4.5:
		gkbsa = 1.08*gkow - 0.7
	case o.KBSA2:
		gkbsa = 0.37*gkow + 2.56
	default:
		gkbsa = 0.71*gkow + 0.42 // Endo & Goss 2011
	}
	gkpl := 0.97*gkow - 6.94 // Kramer 2012
	if o.KPL2 {
		gkpl = 0.56*gkow - 4.635 // Fischer 2018
	}
	const sfKow, sfMw, sfBsaAcid, sfBsaBase, sfPl = 3.5, 1, 0, 1, 3.5
	kmwI := math.Pow(10, gkmw-sfMw)
	kbsaIAcid := math.Pow(10, gkbsa-sfBsaAcid)
	kbsaIBase := math.Pow(10, gkbsa-sfBsaBase)
	kplI := math.Pow(10, gkpl-sfPl)
	ksalt := 0.04*gkow + 0.114 // Ni & Yalkowsky 2003
	salt := math.Pow(10, -ksalt*o.Csalt)

	gkaw := chem.LogHenry - math.Log10(298.15*8.2057338e-5)
	gswat := chem.LogWSol + math.Log10(chem.MW*1000)
	kowN := math.Pow(10, gkow-duow*tc)
	kowI := math.Pow(10, gkow-sfKow-duow*tc)
	swatN := math.Pow(10, gswat+duow*tc)
	kawN := math.Pow(10, gkaw-duaw*tc)
	kbsaN := math.Pow(10, gkbsa)
	kplN := math.Pow(10, gkpl)
	kmwN := math.Pow(10, gkmw)

	// Cell: ionisation at the cell pH.
	pk := ParsePKa(chem.PKaDonor, chem.PKaAccept)
	ion := Ionize(o.CellPH, pk)
	fn, fpos := ion.Neutral, ion.Positive
	fc := 1 - fn
	fneg := fc - fpos
	cellType := "Neutral"
	switch {
	case fn > 0.5:
	case fpos > fneg:
		cellType = "Base"
	case fneg > fpos:
		cellType = "Acid"
	}
	cellKow := (fn*kowN + fc*kowI) / salt
	cellKmw := ((1-o.AnionicVF)*(fn*kmwN+fc*kmwI) +
		o.AnionicVF*(fn*kmwN+fneg*kmwI*o.APropAcid+fpos*kmwI*o.APropBase)) / salt
	ioc, pump := 1.0, 1.0
	switch cellType {
	case "Acid":
		ioc = math.Pow(10, o.CellPH-o.MediumPH)
	case "Base":
		ioc = math.Pow(10, o.MediumPH-o.CellPH)
		if pka, ok := largest(chem.PKaAccept); ok {
			pump = (1 + math.Pow(10, pka-o.LysoPH)) / (1 + math.Pow(10, pka-o.CellPH))
		}
	}
	cellwat := 1 - (o.Pseudooct + o.Memblip + o.Nlom)
	kcwPre := (o.PCells*o.Pseudooct*cellKow + o.Memblip*cellKmw + o.PNlom*o.Nlom*cellKow + cellwat) * ioc
	r := o.LysoDiamNM / 2
	memVF := (r*r*r - (r-o.LysoMembraneNM)*(r-o.LysoMembraneNM)*(r-o.LysoMembraneNM)) / (r * r * r)
	kcw := (1-o.LysoVF)*kcwPre + o.LysoVF*(memVF*cellKmw*ioc*pump)

	// Medium: all forms partition unless RestrictIon.
	mfn, mfpos, mfneg := 1.0, 0.0, 0.0
	if o.RestrictIon {
		mi := Ionize(o.MediumPH, pk)
		mfn, mfpos = mi.Neutral, mi.Positive
		mfneg = 1 - mfn - mfpos
		if mfn == 0 {
			mfn = 1e-5
		}
	}
	mfc := 1 - mfn
	if !o.RestrictIon {
		mfc = 0
	}
	return Partition{
		Kow:      (mfn*kowN + mfc*kowI) / salt,
		Kaw:      mfn * kawN / salt,
		Kbsa:     (mfn*kbsaN + mfpos*kbsaIBase + mfneg*kbsaIAcid) / salt,
		Kpl:      (mfn*kplN + mfc*kplI) / salt,
		Swat:     swatN * (1 + mfc/mfn) / salt,
		Kcw:      kcw,
		CellType: cellType, CellIon: ion, LysoPump: pump, IOCMult: ioc,
	}
}

// swatLiquid is the (subcooled) liquid solubility used for the chemical activity.
func swatLiquid(chem Chemical, swat float64, o Options) float64 {
	if math.IsNaN(chem.MP) {
		return math.NaN()
	}
	mpK := chem.MP + 273.15
	fratio := math.Pow(10, 0.01*(298.15-mpK))
	if mpK <= o.TsysC+273.15 {
		fratio = 1
	}
	return swat / fratio
}

func volumes(s System, o Options) Volumes {
	var v Volumes
	v.Bulk = s.VWorkingUL / 1e6
	v.Well = s.VTotalUL / 1e6
	v.Cells = s.CellYield * (o.CellMass / 1e6) / o.CellDensity / 1e6
	v.Air = v.Well - v.Bulk - v.Cells
	v.Alb = v.Bulk * s.FBSf * 0.733 * o.ConcSerAlb / 1000
	v.Slip = v.Bulk * s.FBSf * o.ConcSerLp / 1000
	v.Dom = o.VdomUL / 1e6
	v.Water = v.Bulk - v.Alb - v.Slip - v.Dom
	return v
}

// largest returns the largest value of an httk pKa list.
func largest(list string) (float64, bool) {
	best, ok := math.Inf(-1), false
	for _, f := range strings.Split(list, ",") {
		if x, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err == nil && x > best {
			best, ok = x, true
		}
	}
	return best, ok
}
