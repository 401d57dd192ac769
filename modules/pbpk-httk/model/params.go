package model

import (
	"fmt"
	"math"

	"toxgate/sdk/invitro"
)

// Params are the pbtk model parameters as httk's parameterize_pbtk returns
// them (flows in L/h/kg^0.75 or fractions of cardiac output, volumes in
// L/kg, clearance in L/h/kg, partition coefficients tissue:unbound plasma).
type Params struct {
	BW            float64 `json:"BW"`
	MW            float64 `json:"MW"`
	Clint         float64 `json:"Clint"`
	FuHep         float64 `json:"Fhep.assay.correction"`
	Clmetabolismc float64 `json:"Clmetabolismc"`
	Fup           float64 `json:"Funbound.plasma"`
	FupUnadjusted float64 `json:"Funbound.plasma.unadjusted"`
	Rblood2plasma float64 `json:"Rblood2plasma"`
	Hematocrit    float64 `json:"hematocrit"`
	Kgutabs       float64 `json:"kgutabs"`
	Fabs          float64 `json:"Fabs"`
	Fgut          float64 `json:"Fgut"`
	Fabsgut       float64 `json:"Fabsgut"`
	Caco2Pab      float64 `json:"Caco2.Pab"`
	Foral         float64 `json:"Foral,omitempty"`
	Fhep          float64 `json:"Fhep,omitempty"`
	MA            float64 `json:"MA"`
	Pow           float64 `json:"Pow"`
	Qcardiacc     float64 `json:"Qcardiacc"`
	Qgfrc         float64 `json:"Qgfrc"`
	Qgutf         float64 `json:"Qgutf"`
	Qkidneyf      float64 `json:"Qkidneyf"`
	Qliverf       float64 `json:"Qliverf"`
	Vartc         float64 `json:"Vartc"`
	Vvenc         float64 `json:"Vvenc"`
	Vgutc         float64 `json:"Vgutc"`
	Vkidneyc      float64 `json:"Vkidneyc"`
	Vliverc       float64 `json:"Vliverc"`
	Vlungc        float64 `json:"Vlungc"`
	Vrestc        float64 `json:"Vrestc"`
	Kgut2pu       float64 `json:"Kgut2pu"`
	Kkidney2pu    float64 `json:"Kkidney2pu"`
	Kliver2pu     float64 `json:"Kliver2pu"`
	Klung2pu      float64 `json:"Klung2pu"`
	Krest2pu      float64 `json:"Krest2pu"`
	Krbc2pu       float64 `json:"Krbc2pu"`
}

// Constants of httk 2.7.4's parameterisation.
const (
	millionCellsPerGLiver = 110   // 10^6 hepatocytes per g liver (Carlile et al. 1997)
	liverDensity          = 1.05  // g/mL (ICRP 1975)
	kgutabsDefault        = 2.18  // 1/h (Wambaugh et al. 2018)
	clintPThreshold       = 0.05  // Clint set to 0 when the assay trend p-value is larger
	minFup                = 1e-4  // minimum.Funbound.plasma
	plasmaPH              = 7.4   // plasma pH
	caco2Default          = 1.6   // 10^-6 cm/s, used when no Caco-2 value is available
	hepVr                 = 0.005 // hepatocyte volume fraction in the Kilford assay
)

// schmittTissues are the tissues for which partition coefficients are
// predicted (httk model.list$pbtk$alltissues); regression lists those
// calibrated by Pearce et al. (2017).
var (
	schmittTissues = []string{"adipose", "bone", "brain", "gut", "heart", "kidney", "liver",
		"lung", "muscle", "skin", "spleen", "red blood cells", "rest"}
	regressed = map[string]bool{"brain": true, "adipose": true, "gut": true, "heart": true,
		"kidney": true, "liver": true, "lung": true, "muscle": true, "skin": true, "spleen": true, "bone": true}
	restTissues = []string{"adipose", "bone", "brain", "heart", "muscle", "skin", "spleen", "rest"}
)

// parameterize reproduces httk's parameterize_pbtk with its defaults
// (adjusted fup, Pearce regression, restrictive clearance, Clint adjusted
// for hepatocyte binding, Caco-2 based Fabs and Fgut).
func (t *tables) parameterize(c *chemical, species string, defaultToHuman bool) (*Params, error) {
	if miss := c.missingFor(species, defaultToHuman); len(miss) > 0 {
		e := inputErr("chem_name", "%s cannot be simulated for %s with httk's data", c.Name, species)
		e.Missing = miss
		if species != "Human" && !defaultToHuman {
			e.Message += "; set default_to_human to substitute human in vitro values"
		}
		return nil, e
	}
	phys := func(name string) float64 { return t.phys[name][species] }
	p := &Params{BW: phys("Average BW"), MW: c.MW, Hematocrit: phys("Hematocrit"), Kgutabs: kgutabsDefault}
	p.Pow = math.Pow(10, c.logP)
	pkas := invitro.ParsePKa(c.pKaDonor, c.pKaAccept)

	// Intrinsic clearance (µL/min/10^6 hepatocytes), p-value check.
	cl, _ := c.clintFor(species, defaultToHuman)
	vals := splitNums(cl[0])
	clint := vals[0]
	pval := math.NaN()
	if len(vals) == 4 {
		pval = vals[3]
	} else if v, ok := point(cl[1]); ok {
		pval = v
	}
	if !math.IsNaN(pval) && pval > clintPThreshold {
		clint = 0
	}
	// Hepatocyte binding (Kilford et al. 2008).
	ion74 := calcIonization(plasmaPH, pkas)
	logPD := math.Log10(p.Pow)
	if ion74.positive <= 0.5 {
		logPD = math.Log10(dow(p.Pow, ion74))
	}
	fuHep := 1 / (1 + 125*hepVr*math.Pow(10, 0.072*logPD*logPD+0.067*logPD-1.126))
	if fuHep < 0 || fuHep > 1 {
		fuHep = 1
	}
	p.FuHep = signif4(fuHep)
	p.Clint = signif4(clint / p.FuHep)

	// Plasma binding with the Pearce (2017) in vitro lipid correction.
	fup, _ := c.fupFor(species, defaultToHuman)
	p.FupUnadjusted = fup
	dowPl := p.Pow * (ion74.neutral + alpha*ion74.charged + ion74.zwitter)
	flipid := phys("Plasma Effective Neutral Lipid Volume Fraction")
	p.Fup = signif4(math.Max(1/(dowPl*flipid+1/fup), minFup))
	if c.hasLogMA {
		p.MA = signif4(math.Pow(10, c.logMA))
	} else {
		p.MA = math.Pow(10, 1.294+0.304*math.Log10(p.Pow)) // Yun & Edginton (2013)
	}
	fprot := phys("Plasma Protein Volume Fraction")
	kp, err := t.schmitt(species, p, fprot, pkas, ion74)
	if err != nil {
		return nil, err
	}
	p.Krbc2pu = kp["red blood cells"]

	// Lumping (httk lump_tissues): liver, kidney, lung, gut kept; the rest lumped.
	co := phys("Cardiac Output")
	vol := func(ts string) float64 { return t.tissueValue(species, ts, "Vol (L/kg)") }
	flow := func(ts string) float64 { return t.tissueValue(species, ts, "Flow (mL/min/kg^(3/4))") / co }
	var vrest, krest float64
	for _, ts := range restTissues {
		vrest += vol(ts)
		krest += vol(ts) * kp[ts]
	}
	p.Krest2pu = signif4(krest / vrest)
	p.Vrestc = signif4(vrest)
	p.Kliver2pu, p.Kkidney2pu, p.Klung2pu, p.Kgut2pu = kp["liver"], kp["kidney"], kp["lung"], kp["gut"]
	vliverRaw := vol("liver")
	p.Vliverc, p.Vkidneyc, p.Vlungc, p.Vgutc = signif4(vliverRaw), signif4(vol("kidney")), signif4(vol("lung")), signif4(vol("gut"))
	p.Qgutf = signif4(flow("gut"))
	p.Qliverf = signif4(flow("liver") - flow("gut"))
	p.Qkidneyf = signif4(flow("kidney"))
	p.Qcardiacc = signif4(co / 1000 * 60)
	p.Qgfrc = signif4(phys("GFR") / 1000 * 60)
	vb := phys("Plasma Volume") / (1 - p.Hematocrit) / 2 / 1000
	p.Vartc, p.Vvenc = signif4(vb), signif4(vb)

	// Blood:plasma ratio: measured (species, else human), else predicted.
	if v, ok := point(c.rb2p[species]); ok {
		p.Rblood2plasma = signif4(v)
	} else if v, ok := point(c.rb2p["Human"]); ok {
		p.Rblood2plasma = signif4(v)
	} else {
		p.Rblood2plasma = signif4(1 - p.Hematocrit + p.Hematocrit*p.Krbc2pu*p.Fup)
	}

	// Metabolic clearance, "unscaled" restrictive model (L/h/kg).
	p.Clmetabolismc = signif4(p.Fup * scaleClint(p.Clint, vliverRaw))

	// Oral absorption: Fabs (Yu & Amidon 1999) and Fgut (Yang et al. 2007 Qgut model).
	if err := t.oral(c, species, p); err != nil {
		return nil, err
	}
	return p, nil
}

// scaleClint converts Clint (µL/min/10^6 cells) to L/h/kg BW.
func scaleClint(clint, vliverc float64) float64 {
	return clint * millionCellsPerGLiver * (vliverc * 1000 * liverDensity) / 1e6 * 60
}

// tissueValue reads a volume or flow for the species, falling back to human.
func (t *tables) tissueValue(species, tissue, variable string) float64 {
	if v, ok := t.tissue[species][tissue][variable]; ok {
		return v
	}
	return t.tissue["Human"][tissue][variable]
}

// schmitt predicts tissue:unbound-plasma partition coefficients (Schmitt
// 2008) calibrated per tissue by Pearce et al. (2017).
func (t *tables) schmitt(species string, p *Params, fprot float64, pkas []invitro.PKa, ionPl ionization) (map[string]float64, error) {
	comp := "Human" // httk uses human tissue composition except for rat
	if species == "Rat" {
		comp = "Rat"
	}
	vars := []string{"Fcell", "Fint", "FWc", "FLc", "FPc", "Fn_Lc", "Fn_PLc", "Fa_PLc", "pH"}
	// "rest": mean composition of the tissues described (except red blood cells).
	rest := map[string]float64{}
	for _, v := range vars {
		var sum float64
		var n int
		for ts, m := range t.tissue[comp] {
			if ts == "red blood cells" {
				continue
			}
			if x, ok := m[v]; ok {
				sum += x
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("httk tissue table: no %s values for %s", v, comp)
		}
		rest[v] = sum / float64(n)
	}
	fwpl := 1 - fprot
	kint := fwpl + 0.37*(1/p.Fup-fwpl)
	knPL := p.MA
	kP := 0.163 + 0.0221*knPL
	kappaNum := ionPl.neutral + ionPl.zwitter + alpha*ionPl.charged
	out := map[string]float64{}
	for _, ts := range schmittTissues {
		m := t.tissue[comp][ts]
		if ts == "rest" {
			m = rest
		}
		if m == nil {
			return nil, fmt.Errorf("httk tissue table: no composition for %s", ts)
		}
		ftot := m["Fcell"] + m["Fint"]
		fcell, fint := m["Fcell"]/ftot, m["Fint"]/ftot
		fnL := m["FLc"] * m["Fn_Lc"]
		fnPL := m["FLc"] * m["Fn_PLc"]
		faPL := m["FLc"] * m["Fa_PLc"]
		ion := calcIonization(m["pH"], pkas)
		knL := dow(p.Pow, ion)
		kaPL := knPL * (ion.neutral + ion.zwitter + 20*ion.positive + 0.05*ion.negative)
		kcell := m["FWc"] + knL*fnL + knPL*fnPL + kaPL*faPL + kP*m["FPc"]
		kappa := kappaNum / (ion.neutral + ion.zwitter + alpha*ion.charged)
		k := fint*kint + kappa*fcell*kcell
		if reg, ok := t.pearce[ts]; ok && regressed[ts] {
			k = math.Pow(10, reg[0]+reg[1]*math.Log10(k*p.Fup)) / p.Fup
		}
		out[ts] = signif4(k)
	}
	return out, nil
}

// oral computes Fabs, Fgut and Fabsgut as httk's get_fabsgut does with its
// default Caco-2 options.
func (t *tables) oral(c *chemical, species string, p *Params) error {
	pab, ok := point(c.caco2)
	if !ok {
		pab = caco2Default
	}
	p.Caco2Pab = pab
	peff := signif4(math.Pow(10, 0.4926*math.Log10(pab)-0.1454)) // Yang et al. 2007, 10^-4 cm/s
	if species == "Rat" {
		peff = signif4(math.Max((peff+0.1815)/1.039/10, 0))
	}
	physOr := func(name string) float64 {
		if v, ok := t.phys[name][species]; ok {
			return v
		}
		return t.phys[name]["Rat"] // httk falls back to rat
	}
	if v, ok := point(c.fabs); ok && species == "Human" {
		p.Fabs = v
	} else {
		mrt, rsi := physOr("Small Intestine Mean Residence Time"), physOr("Small Intestine Radius")
		fabs := 1 - math.Pow(1+2*peff*mrt/7/rsi*60/1e4, -7)
		p.Fabs = signif4(math.Min(fabs, 1))
	}
	if v, ok := point(c.fgut); ok && species == "Human" {
		p.Fgut = v
	} else {
		cluHep := signif4(p.Fup*scaleClint(p.Clint, p.Vliverc)) * p.BW // L/h
		cluGut := cluHep / 100
		asi := signif4(0.66 / 70 * p.BW) // m², Yang et al. 2007
		if species == "Rat" {
			asi = 71.0 / (100 * 100)
		}
		qintest := 0.1 * math.Pow(p.BW, 0.75) / math.Pow(70, 0.75)
		qsiHuman := 38.7 / 1000 * 60 * 15.8757
		qsif := qsiHuman / 68.99
		qvillif := 18 / qsiHuman
		qsi := qsif * p.Qgutf * p.Qcardiacc * math.Pow(p.BW, 0.75)
		qvilli := qvillif * qsi
		clperm := peff * asi * 1000 / 1e4 / 100 * 3600
		qgut := qvilli * clperm / (qvilli + clperm)
		fgut := qgut / (qgut + p.Fup*cluGut)
		fgut = signif4(fgut * qgut / (qintest + qgut))
		p.Fgut = math.Min(fgut, 1)
	}
	p.Fabsgut = signif4(math.Min(p.Fabs*p.Fgut, 1))
	// A measured oral bioavailability takes precedence: Fabsgut = Foral/Fhep
	// (Fhep measured, else the well-stirred hepatic bioavailability).
	if foral, ok := point(c.foral[species]); ok {
		fhep, ok := point(c.fhep)
		if !ok || species != "Human" {
			q := p.Qcardiacc * (p.Qliverf + p.Qgutf) / math.Pow(p.BW, 0.25)
			fhep = signif4(q / (q + p.Fup*p.Clmetabolismc/p.Rblood2plasma))
		}
		p.Fhep = fhep
		p.Foral = foral
		p.Fabsgut = signif4(math.Min(foral/fhep, 1))
	}
	// Absorption rate from the effective permeability (Lennernäs 1997).
	p.Kgutabs = signif4(2 * peff / physOr("Small Intestine Radius") * 3600 / 1e4)
	return nil
}
