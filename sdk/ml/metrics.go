package ml

import (
	"math"
	"sort"
)

// ROCAUC returns the area under the ROC curve of scores p for binary labels y
// (ties count one half); NaN when a class is missing.
func ROCAUC(y []bool, p []float64) float64 {
	idx := order(p)
	var pos, neg float64
	for _, v := range y {
		if v {
			pos++
		} else {
			neg++
		}
	}
	if pos == 0 || neg == 0 {
		return math.NaN()
	}
	// Sum of ranks of positives, with average ranks for ties.
	var rankSum float64
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && p[idx[j]] == p[idx[i]] {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks are 1-based
		for k := i; k < j; k++ {
			if y[idx[k]] {
				rankSum += avg
			}
		}
		i = j
	}
	return (rankSum - pos*(pos+1)/2) / (pos * neg)
}

// PRAUC returns the average precision (area under the precision-recall curve,
// step-wise as scikit-learn's average_precision_score); NaN without positives.
func PRAUC(y []bool, p []float64) float64 {
	idx := order(p)
	var pos float64
	for _, v := range y {
		if v {
			pos++
		}
	}
	if pos == 0 {
		return math.NaN()
	}
	var ap, tp, seen float64
	prevRecall := 0.0
	for i := len(idx) - 1; i >= 0; {
		j := i
		for j >= 0 && p[idx[j]] == p[idx[i]] {
			if y[idx[j]] {
				tp++
			}
			seen++
			j--
		}
		recall := tp / pos
		ap += (recall - prevRecall) * (tp / seen)
		prevRecall = recall
		i = j
	}
	return ap
}

// BalancedAccuracy is the mean of sensitivity and specificity when p ≥ thr
// predicts the positive class.
func BalancedAccuracy(y []bool, p []float64, thr float64) float64 {
	var tp, fn, tn, fp float64
	for i, v := range y {
		pred := p[i] >= thr
		switch {
		case v && pred:
			tp++
		case v:
			fn++
		case pred:
			fp++
		default:
			tn++
		}
	}
	if tp+fn == 0 || tn+fp == 0 {
		return math.NaN()
	}
	return (tp/(tp+fn) + tn/(tn+fp)) / 2
}

// BestThreshold returns the score threshold that maximises balanced accuracy
// (Youden's J) on (y, p); among equal optima the one closest to 0.5.
func BestThreshold(y []bool, p []float64) float64 {
	idx := order(p)
	var pos, neg float64
	for _, v := range y {
		if v {
			pos++
		} else {
			neg++
		}
	}
	if pos == 0 || neg == 0 {
		return 0.5
	}
	// Walking thresholds upward: at threshold p[idx[i]], everything below i is negative.
	best, bestThr := -1.0, 0.5
	fnC, tnC := 0.0, 0.0
	for i := 0; i <= len(idx); {
		thr := 1.0 + 1e-9
		if i < len(idx) {
			thr = p[idx[i]]
		}
		ba := ((pos-fnC)/pos + tnC/neg) / 2
		if ba > best+1e-12 || (math.Abs(ba-best) <= 1e-12 && math.Abs(thr-0.5) < math.Abs(bestThr-0.5)) {
			best, bestThr = ba, thr
		}
		if i == len(idx) {
			break
		}
		j := i
		for j < len(idx) && p[idx[j]] == p[idx[i]] {
			if y[idx[j]] {
				fnC++
			} else {
				tnC++
			}
			j++
		}
		i = j
	}
	return bestThr
}

// Scores are the validation figures of one set of predictions.
type Scores struct {
	N        int     `json:"n"`
	Positive int     `json:"positive"`
	ROCAUC   float64 `json:"roc_auc"`
	PRAUC    float64 `json:"pr_auc"`
	// BA is the balanced accuracy at Threshold.
	BA        float64 `json:"balanced_accuracy"`
	Threshold float64 `json:"threshold"`
}

// Score computes Scores of (y, p) at threshold thr.
func Score(y []bool, p []float64, thr float64) Scores {
	s := Scores{N: len(y), ROCAUC: ROCAUC(y, p), PRAUC: PRAUC(y, p), BA: BalancedAccuracy(y, p, thr), Threshold: thr}
	for _, v := range y {
		if v {
			s.Positive++
		}
	}
	return s
}

// order returns indices sorting p ascending (stable).
func order(p []float64) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	return idx
}
