package model

import "math"

// Published parameter values (see MODEL_CARD.md for every source).
const (
	// MW of doxorubicin, g/mol (ALTERNATIVE dox_script_mrgsolve.R).
	MW = 543.52
	// Fup is the unbound fraction in plasma; BP the blood:plasma ratio.
	Fup = 0.26
	BP  = 1.15
	// CLHepatic and CLRenal, L/h, act on the free tissue concentration
	// (tissue concentration × fup/BP), as in the whole-body R model.
	CLHepatic = 29.97
	CLRenal   = 0.66
	// Heart: extracellular space is 12.5 % of the heart volume; membrane
	// permeability PER (cm/h) times cell surface (cm² per 70 kg); pH
	// gradient factor Kpp; DNA binding Kd and capacity (µmol/mL = mM).
	heartECFraction = 0.125
	per             = 0.0756
	heartSurface    = 6.03e5
	kpp             = 2.2836
	dnaKd           = 0.13 * 1000 // µM
	dnaHeart        = 4.59 * 1000 // µM
)

// tissue indices (perfusion-limited tissues other than the heart).
const (
	tAdipose = iota
	tBone
	tBrain
	tGut
	tKidney
	tLiver
	tLung
	tMuscle
	tSkin
	tSpleen
	tRest
	nTissues
)

var tissueNames = [nTissues]string{"adipose", "bone", "brain", "gut", "kidney", "liver", "lung", "muscle", "skin", "spleen", "rest"}

// Fractions of body weight and densities (kg/L): volume = frac·BW/density.
var (
	volFrac = [nTissues]float64{0.259, 0.090, 0.017, 0.016, 0.004, 0.022, 0.007, 0.403, 0.043, 0.002, 0.057}
	density = [nTissues]float64{0.923, 1.85, 1.04, 1.04, 1.05, 1.08, 1.05, 1.04, 1.1, 1.06, 1.05}
	// Tissue:plasma partition coefficients (Simcyp method, Kp scalar 4).
	kp = [nTissues]float64{7.74, 13.55, 7.50, 54.53, 37.79, 96.80, 18.69, 48.42, 25.53, 54.27, 7.74}
	// Fractions of cardiac output (liver: hepatic artery only; lung: all).
	flowFrac = [nTissues]float64{0.05, 0.05, 0.12, 0.16, 0.19, 0.065, 1, 0.17, 0.05, 0.02, 0}
)

const (
	heartVolFrac, heartDensity, heartFlowFrac = 0.005, 1.04, 0.04
	plasmaVolFrac, plasmaDensity              = 0.044, 1.025
	rbcVolFrac, rbcDensity                    = 0.031, 1.125
)

// Physiology is the individual's physiology derived from the inputs.
type Physiology struct {
	BSA           float64            `json:"bsa_m2"`
	CardiacOutput float64            `json:"cardiac_output_L_per_h"`
	BloodVolume   float64            `json:"blood_volume_L"`
	Volumes       map[string]float64 `json:"volumes_L"`
	Flows         map[string]float64 `json:"flows_L_per_h"`
	Kp            map[string]float64 `json:"kp_tissue_to_plasma"`
	Heart         map[string]float64 `json:"heart"`
	v             [nTissues]float64  // tissue volumes, L
	q             [nTissues]float64  // blood flows, L/h
	vart, vven    float64            // arterial and venous blood, L
	vHeartEC      float64            // heart extracellular, L
	vHeartIC      float64            // heart intracellular, L
	qHeart, ps    float64            // heart blood flow, permeability-surface product (L/h)
	kpec          float64            // heart extracellular:plasma partition
	rhs           rhsCoef            // coefficients of deriv
}

// rhsCoef holds the coefficients of deriv, computed once per individual, so
// that deriv is branch- and division-free (it is called six times per step).
type rhsCoef struct {
	g              [nTissues]float64 // venous blood concentration leaving a tissue per amount, BP/(V·Kp)
	qa             [nTissues]float64 // arterial inflow (0 for the lung, which receives venous blood)
	qo             [nTissues]float64 // outflow (all of the portal flow for the liver, CO for the lung)
	qv             [nTissues]float64 // outflow into venous blood (0 for gut, spleen and lung)
	ke             [nTissues]float64 // elimination per amount (liver, kidney; 0 elsewhere)
	invArt, invVen float64           // 1/V of arterial and venous blood
	hg, fEC        float64           // heart: blood out per EC amount, flux per EC amount
	invIC, psKpp   float64           // heart: 1/V intracellular, PS/Kpp
	invVh          float64           // 1/(heart volume)
}

func (ph *Physiology) setRHS() {
	c := &ph.rhs
	for i := 0; i < nTissues; i++ {
		c.g[i] = BP / (ph.v[i] * kp[i])
		c.qa[i], c.qo[i], c.qv[i] = ph.q[i], ph.q[i], ph.q[i]
	}
	qtot := ph.q[tLiver] + ph.q[tGut] + ph.q[tSpleen]
	c.qo[tLiver], c.qv[tLiver] = qtot, qtot
	c.qv[tGut], c.qv[tSpleen] = 0, 0
	c.qa[tLung], c.qo[tLung], c.qv[tLung] = 0, ph.CardiacOutput, 0
	c.ke[tLiver] = CLHepatic * Fup / BP / ph.v[tLiver]
	c.ke[tKidney] = CLRenal * Fup / BP / ph.v[tKidney]
	c.invArt, c.invVen = 1/ph.vart, 1/ph.vven
	c.hg = BP / (ph.vHeartEC * ph.kpec)
	c.fEC = ph.ps * Fup / (ph.vHeartEC * ph.kpec)
	c.invIC, c.psKpp = 1/ph.vHeartIC, ph.ps/kpp
	c.invVh = 1 / (ph.vHeartEC + ph.vHeartIC)
}

// BSADuBois is body surface area (m²) by Du Bois & Du Bois (1916).
func BSADuBois(weightKg, heightCm float64) float64 {
	return 0.007184 * math.Pow(weightKg, 0.425) * math.Pow(heightCm, 0.725)
}

// CardiacOutput (L/h) by age and BSA (PLoS Comput Biol 2021, e1008786).
func CardiacOutput(age, bsa float64) float64 {
	return bsa * (110 + 184.974*(math.Exp(-0.0378*age)-math.Exp(-0.2477*age)))
}

func newPhysiology(age, weight, height float64) *Physiology {
	ph := &Physiology{BSA: BSADuBois(weight, height)}
	co := CardiacOutput(age, ph.BSA)
	ph.CardiacOutput = co
	ph.Volumes, ph.Flows, ph.Kp = map[string]float64{}, map[string]float64{}, map[string]float64{}
	var qsum float64
	for i := 0; i < nTissues; i++ {
		ph.v[i] = volFrac[i] * weight / density[i]
		ph.q[i] = flowFrac[i] * co
		if i != tLung {
			qsum += ph.q[i]
		}
	}
	ph.qHeart = heartFlowFrac * co
	qsum += ph.qHeart
	// "rest" closes the circulation: it receives what the listed organs do not.
	ph.q[tRest] = co - qsum
	vheart := heartVolFrac * weight / heartDensity
	ph.vHeartEC, ph.vHeartIC = heartECFraction*vheart, (1-heartECFraction)*vheart
	ph.ps = per * heartSurface * (weight / 70) / 1000 // mL/h -> L/h, scaled with body (heart) weight
	ph.kpec = (1-0.157)*Fup + 0.157
	ph.BloodVolume = plasmaVolFrac*weight/plasmaDensity + rbcVolFrac*weight/rbcDensity
	ph.vven, ph.vart = ph.BloodVolume*2/3, ph.BloodVolume/3
	for i, n := range tissueNames {
		ph.Volumes[n], ph.Flows[n], ph.Kp[n] = ph.v[i], ph.q[i], kp[i]
	}
	ph.Flows["liver_total"] = ph.q[tLiver] + ph.q[tGut] + ph.q[tSpleen]
	ph.Volumes["heart"], ph.Flows["heart"] = vheart, ph.qHeart
	ph.Volumes["venous_blood"], ph.Volumes["arterial_blood"] = ph.vven, ph.vart
	ph.Heart = map[string]float64{"extracellular_volume_L": ph.vHeartEC, "intracellular_volume_L": ph.vHeartIC,
		"PS_L_per_h": ph.ps, "Kp_extracellular": ph.kpec, "Kpp": kpp, "DNA_uM": dnaHeart, "Kd_uM": dnaKd}
	ph.setRHS()
	return ph
}

// freeIntracellular solves Ct = Ce + Bmax·Ce/(Kd + Ce) for the free
// concentration Ce (He et al. 2018), in a cancellation-free form.
func freeIntracellular(ct float64) float64 {
	if ct <= 0 {
		return 0
	}
	b := ct - dnaHeart - dnaKd
	d := math.Sqrt(b*b + 4*dnaKd*ct)
	if b >= 0 {
		return (b + d) / 2
	}
	return 2 * dnaKd * ct / (d - b)
}

// freeIntracellularSlope is dCe/dCt at ct, from Ct = Ce + Bmax·Ce/(Kd + Ce):
// dCt/dCe = 1 + Bmax·Kd/(Kd + Ce)².
func freeIntracellularSlope(ct float64) float64 {
	ce := freeIntracellular(ct)
	k := dnaKd + ce
	return 1 / (1 + dnaHeart*dnaKd/(k*k))
}
