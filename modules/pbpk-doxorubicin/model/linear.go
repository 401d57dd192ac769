package model

import (
	"math"

	"toxgate/sdk/ode"
)

// linearSolver solves the RODAS4 linear systems (c·I − J)·x = b of the model
// by block elimination along the blood circulation, in O(nStates) operations
// instead of a dense LU with pivoting (ode.LinearSolver).
//
// J (the dense matrix of Physiology.jacobian) has this pattern: each tissue
// depends on itself and arterial blood (the liver also on gut and spleen, the
// lung on venous blood instead), the heart's extracellular and intracellular
// spaces on each other (and the former on arterial blood), venous blood on
// itself and the tissues draining into it, arterial blood on itself and the
// lung, and the five integrated outputs (eliminated amounts, AUCs) on the
// states they integrate, with nothing depending on them. So every tissue and
// heart unknown is an affine function p + r·x_art of the arterial unknown,
// venous blood and lung follow, and the arterial equation closes the loop with
// one division. The outputs are solved last. With c > 0 every divisor is c
// plus a non-negative rate (W is an M-matrix), so no pivoting is needed.
//
// Only the heart intracellular entries of J depend on the state (the slope
// of DNA binding); the others are read once from Physiology.jacobian.
type linearSolver struct {
	ph *Physiology
	// The entries of J used, read once by newLinearSolver (state-independent)
	// or by Jacobian (the heart intracellular column).
	jTA  [nTissues]float64 // J[tissue][art]
	jTT  [nTissues]float64 // J[tissue][tissue]
	jVT  [nTissues]float64 // J[ven][tissue]
	jVTx [nTissues]float64 // jVT without the liver
	jHG  float64           // J[liver][gut]
	jHS  float64           // J[liver][spleen]
	jLV  float64           // J[lung][ven]
	jAL  float64           // J[art][lung]
	jVV  float64           // J[ven][ven]
	jAA  float64           // J[art][art]
	jEA  float64           // J[EC][art]
	jEE  float64           // J[EC][EC]
	jEI  float64           // J[EC][IC] (state-dependent)
	jIE  float64           // J[IC][EC]
	jII  float64           // J[IC][IC] (state-dependent)
	jVE  float64           // J[ven][EC]
	jOut [5][2]float64     // the outputs' entries, see Solve
	// Factor: c, the reciprocal divisors and x_i = p_i + r_i·x_art.
	c, invC    float64
	invT, rT   [nTissues]float64
	invI, invV float64
	rE, rI, rV float64
	eb, ei     float64 // p_EC = eb·b_EC + ei·b_IC
	invDen     float64
}

func newLinearSolver(ph *Physiology) *linearSolver {
	ls := &linearSolver{ph: ph}
	jac := make([]float64, nStates*nStates)
	ph.jacobian(0, make([]float64, nStates), jac)
	j := func(i, k int) float64 { return jac[i*nStates+k] }
	for i := range nTissues {
		ti := sTissue0 + i
		ls.jTA[i], ls.jTT[i], ls.jVT[i] = j(ti, sArt), j(ti, ti), j(sVen, ti)
	}
	ls.jVTx = ls.jVT
	ls.jVTx[tLiver] = 0
	h, l := sTissue0+tLiver, sTissue0+tLung
	ls.jHG, ls.jHS = j(h, sTissue0+tGut), j(h, sTissue0+tSpleen)
	ls.jLV, ls.jAL, ls.jVV, ls.jAA = j(l, sVen), j(sArt, l), j(sVen, sVen), j(sArt, sArt)
	ls.jEA, ls.jEE, ls.jIE, ls.jVE = j(sHeartEC, sArt), j(sHeartEC, sHeartEC), j(sHeartIC, sHeartEC), j(sVen, sHeartEC)
	ls.jOut = [5][2]float64{{j(sElimHep, h)}, {j(sElimRen, sTissue0+tKidney)}, {j(sAUCp, sVen)},
		{j(sAUCh, sHeartEC), j(sAUCh, sHeartIC)}, {}}
	ls.Jacobian(0, make([]float64, nStates))
	return ls
}

var _ ode.LinearSolver = (*linearSolver)(nil)

// Jacobian updates the state-dependent entries of J (heart intracellular
// column), as Physiology.jacobian computes them.
func (ls *linearSolver) Jacobian(_ float64, y []float64) {
	ph := ls.ph
	dce := freeIntracellularSlope(y[sHeartIC] / ph.vHeartIC)
	fIC := -ph.ps / kpp * dce / ph.vHeartIC
	vh := ph.vHeartEC + ph.vHeartIC
	ls.jEI, ls.jII = -fIC, fIC
	ls.jOut[4][0] = (1 - dce) / vh
}

// Factor computes the divisors and the coefficients r (independent of b).
func (ls *linearSolver) Factor(c float64) error {
	ls.c, ls.invC = c, 1/c
	for i := range nTissues {
		ls.invT[i] = 1 / (c - ls.jTT[i])
		ls.rT[i] = ls.jTA[i] * ls.invT[i] // the liver's and the lung's are set below
	}
	ls.rT[tLiver] = (ls.jTA[tLiver] + ls.jHG*ls.rT[tGut] + ls.jHS*ls.rT[tSpleen]) * ls.invT[tLiver]
	// Heart: [dE −J_EI; −J_IE dI]·[xE; xI] = [bE + J_EA·x_art; bI].
	dE, dI := c-ls.jEE, c-ls.jII
	det := dE*dI - ls.jEI*ls.jIE
	ls.eb, ls.ei = dI/det, ls.jEI/det
	ls.invI = 1 / dI
	ls.rE = ls.eb * ls.jEA
	ls.rI = ls.jIE * ls.rE * ls.invI
	ls.rT[tLung] = 0 // the lung receives venous, not arterial, blood
	rv := ls.jVE * ls.rE
	for i := range nTissues {
		rv += ls.jVT[i] * ls.rT[i]
	}
	ls.invV = 1 / (c - ls.jVV)
	ls.rV = rv * ls.invV
	ls.rT[tLung] = ls.jLV * ls.rV * ls.invT[tLung]
	den := c - ls.jAA - ls.jAL*ls.rT[tLung]
	ls.invDen = 1 / den
	if !(det > 0) || !(den > 0) || math.IsInf(det, 0) || math.IsInf(den, 0) {
		return ode.ErrSingular
	}
	return nil
}

// Solve overwrites b with (c·I − J)⁻¹·b.
func (ls *linearSolver) Solve(b []float64) {
	b = b[:nStates]
	bt := (*[nTissues]float64)(b[sTissue0 : sTissue0+nTissues])
	pE := ls.eb*b[sHeartEC] + ls.ei*b[sHeartIC]
	pI := (b[sHeartIC] + ls.jIE*pE) * ls.invI
	pv := b[sVen] + ls.jVE*pE
	var p [nTissues]float64
	for i := range nTissues {
		p[i] = bt[i] * ls.invT[i]
		pv += ls.jVTx[i] * p[i] // J[ven][lung] = 0; the liver's term below
	}
	p[tLiver] = (bt[tLiver] + ls.jHG*p[tGut] + ls.jHS*p[tSpleen]) * ls.invT[tLiver]
	pv = (pv + ls.jVT[tLiver]*p[tLiver]) * ls.invV
	p[tLung] = (bt[tLung] + ls.jLV*pv) * ls.invT[tLung]
	xa := (b[sArt] + ls.jAL*p[tLung]) * ls.invDen
	for i := range nTissues {
		bt[i] = p[i] + ls.rT[i]*xa
	}
	b[sArt] = xa
	b[sVen] = pv + ls.rV*xa
	b[sHeartEC] = pE + ls.rE*xa
	b[sHeartIC] = pI + ls.rI*xa
	// Outputs: c·x_o − Σ_k J_ok·x_k = b_o, x_k already known.
	o := &ls.jOut
	b[sElimHep] = (b[sElimHep] + o[0][0]*bt[tLiver]) * ls.invC
	b[sElimRen] = (b[sElimRen] + o[1][0]*bt[tKidney]) * ls.invC
	b[sAUCp] = (b[sAUCp] + o[2][0]*b[sVen]) * ls.invC
	b[sAUCh] = (b[sAUCh] + o[3][0]*b[sHeartEC] + o[3][1]*b[sHeartIC]) * ls.invC
	b[sAUChb] = (b[sAUChb] + o[4][0]*b[sHeartIC]) * ls.invC
}
