package ode

import "math"

// luFactor factors the n×n row-major matrix a in place as P·A = L·U with
// partial pivoting, recording the row interchanges in piv.
func luFactor(a []float64, n int, piv []int) error {
	for k := 0; k < n; k++ {
		p := k
		max := math.Abs(a[k*n+k])
		for i := k + 1; i < n; i++ {
			if v := math.Abs(a[i*n+k]); v > max {
				max, p = v, i
			}
		}
		piv[k] = p
		if max == 0 || math.IsNaN(max) {
			return ErrSingular
		}
		if p != k {
			rk, rp := a[k*n:(k+1)*n], a[p*n:(p+1)*n]
			for j := range rk {
				rk[j], rp[j] = rp[j], rk[j]
			}
		}
		inv := 1 / a[k*n+k]
		rowK := a[k*n : (k+1)*n]
		for i := k + 1; i < n; i++ {
			rowI := a[i*n : (i+1)*n]
			m := rowI[k] * inv
			if m == 0 {
				continue
			}
			rowI[k] = m
			for j := k + 1; j < n; j++ {
				rowI[j] -= m * rowK[j]
			}
		}
	}
	return nil
}

// luSolve solves A·x = b in place (b becomes x) given the factors of luFactor.
func luSolve(a []float64, n int, piv []int, b []float64) {
	for k := 0; k < n; k++ {
		if p := piv[k]; p != k {
			b[k], b[p] = b[p], b[k]
		}
	}
	for i := 1; i < n; i++ {
		row := a[i*n : i*n+i]
		s := b[i]
		for j, v := range row {
			s -= v * b[j]
		}
		b[i] = s
	}
	for i := n - 1; i >= 0; i-- {
		row := a[i*n : (i+1)*n]
		s := b[i]
		for j := i + 1; j < n; j++ {
			s -= row[j] * b[j]
		}
		b[i] = s / row[i]
	}
}
