package ml

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Record is one raw training row: a SMILES and one label per task (1, 0 or
// NaN when not measured).
type Record struct {
	SMILES string
	Labels []float32
}

// Dataset is a curated training set: one row per distinct structure.
type Dataset struct {
	Tasks     []string
	SMILES    []string // the first input SMILES of each structure
	Scaffolds []string // Bemis–Murcko scaffold keys
	X         []Sparse
	FP        [][]uint64 // applicability-domain fingerprints
	Y         [][]float32
	// Invalid counts rows whose SMILES could not be read; Conflicts counts
	// task labels dropped because duplicates disagreed, per task.
	Invalid   int
	Conflicts []int
}

// Curate standardises the records' structures (largest fragment), drops
// unreadable ones, merges duplicates (same MolKey) and drops a task label
// when the duplicates of a structure disagree on it.
func Curate(f Featurizer, tasks []string, recs []Record) *Dataset {
	type parsed struct {
		key, scaf string
		x         Sparse
		fp        []uint64
		ok        bool
	}
	out := make([]parsed, len(recs))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(recs); i += workers {
				m, err := Standardize(recs[i].SMILES)
				if err != nil || m.NumHeavyAtoms() == 0 {
					continue
				}
				out[i] = parsed{MolKey(m), ScaffoldKey(m), f.Features(m), ADFingerprint(m), true}
			}
		}(w)
	}
	wg.Wait()
	ds := &Dataset{Tasks: tasks, Conflicts: make([]int, len(tasks))}
	rowOf := map[string]int{}
	conflict := [][]bool{}
	for i, p := range out {
		if !p.ok {
			ds.Invalid++
			continue
		}
		r, seen := rowOf[p.key]
		if !seen {
			r = len(ds.X)
			rowOf[p.key] = r
			ds.SMILES = append(ds.SMILES, recs[i].SMILES)
			ds.Scaffolds = append(ds.Scaffolds, p.scaf)
			ds.X = append(ds.X, p.x)
			ds.FP = append(ds.FP, p.fp)
			y := make([]float32, len(tasks))
			for t := range y {
				y[t] = float32(math.NaN())
			}
			ds.Y = append(ds.Y, y)
			conflict = append(conflict, make([]bool, len(tasks)))
		}
		for t, v := range recs[i].Labels {
			if math.IsNaN(float64(v)) || conflict[r][t] {
				continue
			}
			cur := ds.Y[r][t]
			switch {
			case math.IsNaN(float64(cur)):
				ds.Y[r][t] = v
			case cur != v:
				conflict[r][t] = true
				ds.Y[r][t] = float32(math.NaN())
				ds.Conflicts[t]++
			}
		}
	}
	// Drop structures left without any label.
	keep := 0
	for r := range ds.X {
		has := false
		for _, v := range ds.Y[r] {
			if !math.IsNaN(float64(v)) {
				has = true
			}
		}
		if !has {
			continue
		}
		ds.SMILES[keep], ds.Scaffolds[keep], ds.X[keep], ds.FP[keep], ds.Y[keep] = ds.SMILES[r], ds.Scaffolds[r], ds.X[r], ds.FP[r], ds.Y[r]
		keep++
	}
	ds.SMILES, ds.Scaffolds, ds.X, ds.FP, ds.Y = ds.SMILES[:keep], ds.Scaffolds[:keep], ds.X[:keep], ds.FP[:keep], ds.Y[:keep]
	return ds
}

// Labelled returns the rows labelled for task t and their labels.
func (ds *Dataset) Labelled(t int) (rows []int, y []bool) {
	for r := range ds.Y {
		if v := ds.Y[r][t]; !math.IsNaN(float64(v)) {
			rows = append(rows, r)
			y = append(y, v > 0.5)
		}
	}
	return rows, y
}

// Summary counts the labelled rows of task t.
func (ds *Dataset) Summary(t int, source string) DataSummary {
	_, y := ds.Labelled(t)
	s := DataSummary{Source: source, Rows: len(y), Dropped: ds.Invalid, Conflicts: ds.Conflicts[t]}
	for _, v := range y {
		if v {
			s.Positive++
		} else {
			s.Negative++
		}
	}
	return s
}

// CrossValidate fits spec on all folds but one, k times, and returns the
// out-of-fold probabilities (rows × outputs). Folds run in parallel up to
// GOMAXPROCS; the result does not depend on the parallelism.
func CrossValidate(spec Spec, X []Sparse, Y [][]float32, nf int, folds []int, k int) ([][]float64, error) {
	oof := make([][]float64, len(X))
	errs := make([]error, k)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for f := 0; f < k; f++ {
		wg.Add(1)
		go func(f int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var xs []Sparse
			var ys [][]float32
			for i := range X {
				if folds[i] != f {
					xs, ys = append(xs, X[i]), append(ys, Y[i])
				}
			}
			s := spec
			s.Seed += int64(f) * 1000
			m, err := Fit(s, xs, ys, nf)
			if err != nil {
				errs[f] = fmt.Errorf("fold %d: %w", f, err)
				return
			}
			dense := make([]float32, nf)
			for i := range X {
				if folds[i] == f {
					oof[i] = m.Predict(X[i], dense)
				}
			}
		}(f)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return oof, nil
}
