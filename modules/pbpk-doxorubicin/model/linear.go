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
	ph  *Physiology
	jac []float64 // J, nStates×nStates row-major
	c   float64
	inv [nStates]float64 // 1/(c − J_ii) of the circulation states
	r   [nStates]float64 // x_i = p_i + r_i·x_art
	// det is the determinant of the heart's 2×2 block; den the divisor of x_art.
	det, den float64
}

func newLinearSolver(ph *Physiology) *linearSolver {
	ls := &linearSolver{ph: ph, jac: make([]float64, nStates*nStates)}
	ph.jacobian(0, make([]float64, nStates), ls.jac)
	return ls
}

var _ ode.LinearSolver = (*linearSolver)(nil)

// j returns J[i][k].
func (ls *linearSolver) j(i, k int) float64 { return ls.jac[i*nStates+k] }

// Jacobian updates the state-dependent entries of J (heart intracellular
// column), as Physiology.jacobian computes them.
func (ls *linearSolver) Jacobian(_ float64, y []float64) {
	ph := ls.ph
	dce := freeIntracellularSlope(y[sHeartIC] / ph.vHeartIC)
	fIC := -ph.ps / kpp * dce / ph.vHeartIC
	vh := ph.vHeartEC + ph.vHeartIC
	ls.jac[sHeartEC*nStates+sHeartIC] = -fIC
	ls.jac[sHeartIC*nStates+sHeartIC] = fIC
	ls.jac[sAUChb*nStates+sHeartIC] = (1 - dce) / vh
}

// Factor computes the divisors and the coefficients r (independent of b).
func (ls *linearSolver) Factor(c float64) error {
	ls.c = c
	for i := sVen; i <= sHeartIC; i++ {
		ls.inv[i] = 1 / (c - ls.j(i, i))
	}
	for i := 0; i < nTissues; i++ {
		ti := sTissue0 + i
		if i != tLung && i != tLiver {
			ls.r[ti] = ls.j(ti, sArt) * ls.inv[ti]
		}
	}
	h, g, s := sTissue0+tLiver, sTissue0+tGut, sTissue0+tSpleen
	ls.r[h] = (ls.j(h, sArt) + ls.j(h, g)*ls.r[g] + ls.j(h, s)*ls.r[s]) * ls.inv[h]
	// Heart: [dE −J_EI; −J_IE dI]·[xE; xI] = [bE + J_EA·x_art; bI].
	dE, dI := c-ls.j(sHeartEC, sHeartEC), c-ls.j(sHeartIC, sHeartIC)
	ls.det = dE*dI - ls.j(sHeartEC, sHeartIC)*ls.j(sHeartIC, sHeartEC)
	ls.r[sHeartEC] = dI * ls.j(sHeartEC, sArt) / ls.det
	ls.r[sHeartIC] = ls.j(sHeartIC, sHeartEC) * ls.r[sHeartEC] * ls.inv[sHeartIC]
	rv := ls.j(sVen, sHeartEC) * ls.r[sHeartEC]
	for i := 0; i < nTissues; i++ {
		rv += ls.j(sVen, sTissue0+i) * ls.r[sTissue0+i]
	}
	ls.r[sVen] = rv * ls.inv[sVen]
	l := sTissue0 + tLung
	ls.r[l] = ls.j(l, sVen) * ls.r[sVen] * ls.inv[l]
	ls.den = c - ls.j(sArt, sArt) - ls.j(sArt, l)*ls.r[l]
	ls.r[sArt] = 1
	if !(ls.det > 0) || !(ls.den > 0) || math.IsInf(ls.det, 0) || math.IsInf(ls.den, 0) {
		return ode.ErrSingular
	}
	return nil
}

// Solve overwrites b with (c·I − J)⁻¹·b.
func (ls *linearSolver) Solve(b []float64) {
	b = b[:nStates]
	var p [nStates]float64
	for i := 0; i < nTissues; i++ {
		ti := sTissue0 + i
		if i != tLung && i != tLiver {
			p[ti] = b[ti] * ls.inv[ti]
		}
	}
	h, g, s, l := sTissue0+tLiver, sTissue0+tGut, sTissue0+tSpleen, sTissue0+tLung
	p[h] = (b[h] + ls.j(h, g)*p[g] + ls.j(h, s)*p[s]) * ls.inv[h]
	dI := ls.c - ls.j(sHeartIC, sHeartIC)
	p[sHeartEC] = (dI*b[sHeartEC] + ls.j(sHeartEC, sHeartIC)*b[sHeartIC]) / ls.det
	p[sHeartIC] = (b[sHeartIC] + ls.j(sHeartIC, sHeartEC)*p[sHeartEC]) * ls.inv[sHeartIC]
	pv := b[sVen] + ls.j(sVen, sHeartEC)*p[sHeartEC]
	for i := 0; i < nTissues; i++ {
		pv += ls.j(sVen, sTissue0+i) * p[sTissue0+i]
	}
	p[sVen] = pv * ls.inv[sVen]
	p[l] = (b[l] + ls.j(l, sVen)*p[sVen]) * ls.inv[l]
	xa := (b[sArt] + ls.j(sArt, l)*p[l]) / ls.den
	for i := sVen; i <= sHeartIC; i++ {
		b[i] = p[i] + ls.r[i]*xa
	}
	b[sArt] = xa
	// Outputs: c·x_o − Σ_k J_ok·x_k = b_o, x_k already known.
	inv := 1 / ls.c
	b[sElimHep] = (b[sElimHep] + ls.j(sElimHep, h)*b[h]) * inv
	b[sElimRen] = (b[sElimRen] + ls.j(sElimRen, sTissue0+tKidney)*b[sTissue0+tKidney]) * inv
	b[sAUCp] = (b[sAUCp] + ls.j(sAUCp, sVen)*b[sVen]) * inv
	b[sAUCh] = (b[sAUCh] + ls.j(sAUCh, sHeartEC)*b[sHeartEC] + ls.j(sAUCh, sHeartIC)*b[sHeartIC]) * inv
	b[sAUChb] = (b[sAUChb] + ls.j(sAUChb, sHeartIC)*b[sHeartIC]) * inv
}
