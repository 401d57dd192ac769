package ml

import (
	"fmt"
	"math"
	"strings"
)

// Ensemble averages the calibrated probabilities of single-output member
// models. Each member's Platt calibration is fitted on its own out-of-fold
// predictions (an inner stratified cross-validation on the ensemble's
// training rows), so that members whose raw outputs live on different scales
// (a class-balanced GBT around 0.5, a kNN around the base rate) count alike.
type Ensemble struct {
	Members []*Model
	Cal     []Calibration
}

// ensembleInnerFolds is the number of folds of the inner cross-validation
// that calibrates each member.
const ensembleInnerFolds = 3

// maxEnsembleMembers bounds the members of one ensemble.
const maxEnsembleMembers = 8

func (s Spec) ensembleString() string {
	parts := make([]string, len(s.Members))
	for i, m := range s.Members {
		parts[i] = m.String()
	}
	return "ensemble (mean of calibrated probabilities: " + strings.Join(parts, "; ") + ")"
}

// fitEnsemble fits each member spec on (xs, ys) and calibrates it on an
// inner cross-validation. Members inherit the ensemble's Seed.
func fitEnsemble(spec Spec, xs []Sparse, ys []float32, nf int) (*Ensemble, error) {
	if len(spec.Members) == 0 || len(spec.Members) > maxEnsembleMembers {
		return nil, fmt.Errorf("ml: ensemble of %d members (want 1..%d)", len(spec.Members), maxEnsembleMembers)
	}
	y := make([]bool, len(ys))
	Y := make([][]float32, len(ys))
	for i, v := range ys {
		y[i], Y[i] = v > 0.5, []float32{v}
	}
	folds := RandomFolds(y, ensembleInnerFolds, spec.Seed)
	e := &Ensemble{}
	for k, ms := range spec.Members {
		switch ms.Kind {
		case KindLogReg, KindGBT, KindKNN, KindRF:
		default:
			return nil, fmt.Errorf("ml: ensemble member %d: kind %q is not a single-output learner", k, ms.Kind)
		}
		ms.Seed = spec.Seed + int64(k)*7919
		oof, err := CrossValidate(ms, xs, Y, nf, folds, ensembleInnerFolds)
		if err != nil {
			return nil, fmt.Errorf("ml: ensemble member %d calibration: %w", k, err)
		}
		p := make([]float64, len(oof))
		for i, o := range oof {
			p[i] = o[0]
		}
		m, err := Fit(ms, xs, Y, nf)
		if err != nil {
			return nil, fmt.Errorf("ml: ensemble member %d: %w", k, err)
		}
		e.Members = append(e.Members, m)
		e.Cal = append(e.Cal, FitCalibration(y, p))
	}
	return e, nil
}

// predict is the mean calibrated probability of the members.
func (e *Ensemble) predict(x Sparse, dense []float32) float64 {
	var sum float64
	for i, m := range e.Members {
		sum += e.Cal[i].Apply(m.Predict(x, dense)[0])
	}
	p := sum / float64(len(e.Members))
	if math.IsNaN(p) {
		return 0.5
	}
	return p
}
