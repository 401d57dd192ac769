package ode

import "math"

// luFactor factors the n×n row-major matrix a in place as P·A = L·U with
// partial pivoting, recording the row interchanges in piv. cols is scratch
// space of n entries. Exact zeros of the pivot row are skipped in the row
// updates (x − m·0 = x), so a sparse matrix costs only its non-zeros while
// the result is that of the dense algorithm.
func luFactor(a []float64, n int, piv []int, cols []int) error {
	a = a[:n*n]
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
		nz := cols[:0]
		for j := k + 1; j < n; j++ {
			if rowK[j] != 0 {
				nz = append(nz, j)
			}
		}
		for i := k + 1; i < n; i++ {
			rowI := a[i*n : (i+1)*n]
			m := rowI[k] * inv
			if m == 0 {
				continue
			}
			rowI[k] = m
			for _, j := range nz {
				rowI[j] -= m * rowK[j]
			}
		}
	}
	return nil
}

// sparseLU holds the non-zeros of the factors of luFactor row by row, so that
// the several solves of one step skip the exact zeros of L and U. The
// products are accumulated in the order of a dense forward and back
// substitution, so the solution is the same (up to the sign of an exact zero).
type sparseLU struct {
	n              int
	piv            []int
	lIdx, uIdx     []int32
	lVal, uVal     []float64
	lStart, uStart []int32 // n+1 entries each
	diag           []float64
}

func (s *sparseLU) init(n int) {
	s.n = n
	s.lStart, s.uStart = make([]int32, n+1), make([]int32, n+1)
	s.diag = make([]float64, n)
	s.lIdx, s.uIdx = make([]int32, 0, n*n/2), make([]int32, 0, n*n/2)
	s.lVal, s.uVal = make([]float64, 0, n*n/2), make([]float64, 0, n*n/2)
}

// load records the factors in a (from luFactor) and the pivots. The slices
// are grown in locals and stored once: appending to the fields directly
// writes pointers to the heap at every non-zero (a GC write barrier each).
func (s *sparseLU) load(a []float64, piv []int) {
	n := s.n
	s.piv = piv
	lIdx, uIdx, lVal, uVal := s.lIdx[:0], s.uIdx[:0], s.lVal[:0], s.uVal[:0]
	lStart, uStart, diag := s.lStart[:n+1], s.uStart[:n+1], s.diag[:n]
	a = a[:n*n]
	for i := 0; i < n; i++ {
		row := a[i*n : (i+1)*n]
		lStart[i] = int32(len(lIdx))
		for j, v := range row[:i] {
			if v != 0 {
				lIdx, lVal = append(lIdx, int32(j)), append(lVal, v)
			}
		}
		diag[i] = row[i]
		uStart[i] = int32(len(uIdx))
		for j, v := range row[i+1:] {
			if v != 0 {
				uIdx, uVal = append(uIdx, int32(i+1+j)), append(uVal, v)
			}
		}
	}
	lStart[n], uStart[n] = int32(len(lIdx)), int32(len(uIdx))
	s.lIdx, s.uIdx, s.lVal, s.uVal = lIdx, uIdx, lVal, uVal
}

// solve solves A·x = b in place.
func (s *sparseLU) solve(b []float64) {
	n := s.n
	b = b[:n]
	piv := s.piv[:n]
	for k, p := range piv {
		if p != k {
			b[k], b[p] = b[p], b[k]
		}
	}
	lStart, uStart := s.lStart[:n+1], s.uStart[:n+1]
	lIdx, lVal := s.lIdx, s.lVal[:len(s.lIdx)]
	for i := 1; i < n; i++ {
		sum := b[i]
		idx, val := lIdx[lStart[i]:lStart[i+1]], lVal[lStart[i]:lStart[i+1]]
		val = val[:len(idx)]
		for q, j := range idx {
			sum -= val[q] * b[j]
		}
		b[i] = sum
	}
	uIdx, uVal := s.uIdx, s.uVal[:len(s.uIdx)]
	diag := s.diag[:n]
	for i := n - 1; i >= 0; i-- {
		sum := b[i]
		idx, val := uIdx[uStart[i]:uStart[i+1]], uVal[uStart[i]:uStart[i+1]]
		val = val[:len(idx)]
		for q, j := range idx {
			sum -= val[q] * b[j]
		}
		b[i] = sum / diag[i]
	}
}
