package main

import (
	"fmt"
	"log"
	"math"
	"strings"

	"toxgate/sdk/ml"
)

// taskDef describes a task before training.
type taskDef struct {
	Key, Title, Definition, Positive, Negative, Source string
	// OnScaffolds selects the learner on the mean of its random- and
	// scaffold-split ROC-AUC instead of the random split alone: for
	// endpoints judged on structures unlike the training set.
	OnScaffolds bool
}

// selectionScore is the cross-validated figure a learner is chosen on:
// res holds its random- and scaffold-split results, in splitNames order.
func selectionScore(def taskDef, res []ml.CVResult) float64 {
	if def.OnScaffolds {
		return (res[0].ROCAUC + res[1].ROCAUC) / 2
	}
	return res[0].ROCAUC
}

var feat = ml.DefaultFeaturizer

// cvSplits returns the random and scaffold folds of the rows.
func cvSplits(y []bool, scaffolds []string) map[string][]int {
	return map[string][]int{
		"random":   ml.RandomFolds(y, *folds, *seed),
		"scaffold": ml.ScaffoldFolds(scaffolds, *folds, *seed),
	}
}

var splitNames = []string{"random", "scaffold"}

// subset returns X and single-column Y of the given rows of task t.
func subset(ds *ml.Dataset, rows []int, t int) ([]ml.Sparse, [][]float32, []string) {
	X := make([]ml.Sparse, len(rows))
	Y := make([][]float32, len(rows))
	sc := make([]string, len(rows))
	for k, r := range rows {
		X[k], Y[k], sc[k] = ds.X[r], []float32{ds.Y[r][t]}, ds.Scaffolds[r]
	}
	return X, Y, sc
}

// selectAndFit cross-validates each spec on task t of ds, keeps the one with
// the best selectionScore, picks its threshold on the out-of-fold
// predictions and refits it on every labelled row.
func selectAndFit(ds *ml.Dataset, t int, specs []ml.Spec, def taskDef) (*ml.Model, ml.Task, error) {
	return selectAndFitNF(ds, t, specs, def, feat.NumFeatures())
}

// selectAndFitNF is selectAndFit for feature vectors of nf features.
func selectAndFitNF(ds *ml.Dataset, t int, specs []ml.Spec, def taskDef, nf int) (*ml.Model, ml.Task, error) {
	rows, y := ds.Labelled(t)
	X, Y, sc := subset(ds, rows, t)
	splits := cvSplits(y, sc)
	task := ml.Task{Key: def.Key, Title: def.Title, Definition: def.Definition, Positive: def.Positive,
		Negative: def.Negative, Available: true, Data: ds.Summary(t, def.Source)}
	bestAUC := -1.0
	var best ml.Spec
	var results []ml.CVResult
	for _, spec := range specs {
		oofs := map[string][]float64{}
		for _, split := range splitNames {
			oof, err := ml.CrossValidate(spec, X, Y, nf, splits[split], *folds)
			if err != nil {
				return nil, task, fmt.Errorf("%s %s CV: %w", def.Key, spec.Kind, err)
			}
			oofs[split] = column(oof, 0)
		}
		cal := calibrate(spec, y, oofs)
		thr := ml.BestThreshold(y, oofs["random"])
		var specRes []ml.CVResult
		for _, split := range splitNames {
			r := ml.CVResult{Learner: spec.String(), Split: split, Scores: ml.Score(y, oofs[split], thr)}
			logScore(def.Key, r)
			specRes = append(specRes, r)
		}
		results = append(results, specRes...)
		if auc := selectionScore(def, specRes); auc > bestAUC {
			bestAUC, best, task.Threshold, task.Calibration = auc, spec, thr, cal
			task.Conformal = ml.FitConformal(y, oofs["random"], *seed)
		}
	}
	// Keep the chosen learner's results first.
	task.Learner = best.String()
	if def.OnScaffolds {
		task.Selection = "mean of the random- and scaffold-split ROC-AUC"
	}
	task.CV = orderResults(results, task.Learner)
	m, err := ml.Fit(best, X, Y, nf)
	if err != nil {
		return nil, task, fmt.Errorf("%s final fit: %w", def.Key, err)
	}
	log.Printf("%-10s chosen: %s, threshold %.3f", def.Key, task.Learner, task.Threshold)
	return m, task, nil
}

func orderResults(rs []ml.CVResult, first string) []ml.CVResult {
	var out []ml.CVResult
	for _, r := range rs {
		if r.Learner == first {
			out = append(out, r)
		}
	}
	for _, r := range rs {
		if r.Learner != first {
			out = append(out, r)
		}
	}
	return out
}

func column(oof [][]float64, t int) []float64 {
	out := make([]float64, len(oof))
	for i, p := range oof {
		out[i] = p[t]
	}
	return out
}

func logScore(key string, r ml.CVResult) {
	log.Printf("%-10s %-8s ROC-AUC %.3f  PR-AUC %.3f  BA %.3f (thr %.3f, n %d, pos %d)  %s",
		key, r.Split, r.ROCAUC, r.PRAUC, r.BA, r.Threshold, r.N, r.Positive, r.Learner)
}

// cvMulti cross-validates a multi-output spec (an MLP) over all tasks of ds
// with folds stratified on the union of positives, and returns per-task
// results, thresholds, calibrations and conformal predictors.
func cvMulti(ds *ml.Dataset, spec ml.Spec, keys []string) ([][]ml.CVResult, []float64, []ml.Calibration, []*ml.Conformal, error) {
	any := make([]bool, len(ds.Y))
	for r, yr := range ds.Y {
		for _, v := range yr {
			if v > 0.5 {
				any[r] = true
			}
		}
	}
	splits := cvSplits(any, ds.Scaffolds)
	T := len(ds.Tasks)
	res := make([][]ml.CVResult, T)
	thr := make([]float64, T)
	cal := make([]ml.Calibration, T)
	conf := make([]*ml.Conformal, T)
	oofs := map[string][][]float64{}
	for _, split := range splitNames {
		oof, err := ml.CrossValidate(spec, ds.X, ds.Y, feat.NumFeatures(), splits[split], *folds)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		oofs[split] = oof
	}
	for t := 0; t < T; t++ {
		rows, y := ds.Labelled(t)
		pick := func(oof [][]float64) []float64 {
			p := make([]float64, len(rows))
			for k, r := range rows {
				p[k] = oof[r][t]
			}
			return p
		}
		ps := map[string][]float64{}
		for _, split := range splitNames {
			ps[split] = pick(oofs[split])
		}
		cal[t] = calibrate(spec, y, ps)
		thr[t] = ml.BestThreshold(y, ps["random"])
		conf[t] = ml.FitConformal(y, ps["random"], *seed)
		for _, split := range splitNames {
			r := ml.CVResult{Learner: spec.String(), Split: split, Scores: ml.Score(y, ps[split], thr[t])}
			logScore(keys[t], r)
			res[t] = append(res[t], r)
		}
	}
	return res, thr, cal, conf, nil
}

// calibrate fits Platt scaling to the random-split out-of-fold
// probabilities and applies it to every split's predictions in place, so that
// reported probabilities match observed frequencies on unseen structures.
func calibrate(_ ml.Spec, y []bool, oofs map[string][]float64) ml.Calibration {
	c := ml.FitCalibration(y, oofs["random"])
	for _, p := range oofs {
		for i := range p {
			p[i] = c.Apply(p[i])
		}
	}
	return c
}

// writeBundle saves the bundle and a Markdown CV report next to it.
func writeBundle(module string, b *ml.Bundle) error {
	return writeBundleAs(module, "weights.gob.gz", "CV.md", b)
}

// cvReport renders the cross-validation figures of a bundle as Markdown.
func cvReport(b *ml.Bundle) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# Cross-validation of %s %s\n\nGenerated by `%s`; do not edit.\n", b.Name, b.Version, b.Command)
	fmt.Fprintf(&sb, "%d-fold CV, random (stratified) and Bemis–Murcko scaffold splits. Probabilities are Platt-calibrated on the random-split out-of-fold predictions; the threshold maximises balanced accuracy on them and is applied to both splits.\n", *folds)
	for _, t := range b.Tasks {
		fmt.Fprintf(&sb, "\n## %s (%s)\n\n", t.Title, t.Key)
		if !t.Available {
			fmt.Fprintf(&sb, "Not available: %s\n", t.Reason)
			continue
		}
		d := t.Data
		fmt.Fprintf(&sb, "Data: %s — %d structures (%d positive, %d negative) after curation; %d unreadable rows, %d conflicting duplicates dropped.\n\n",
			d.Source, d.Rows, d.Positive, d.Negative, d.Dropped, d.Conflicts)
		fmt.Fprintf(&sb, "Chosen: %s, threshold %.3f.\n\n", t.Learner, t.Threshold)
		if t.Selection != "" {
			fmt.Fprintf(&sb, "Chosen among the learners below on the %s.\n\n", t.Selection)
		}
		sb.WriteString("| learner | split | ROC-AUC | PR-AUC | balanced acc. |\n|---|---|---|---|---|\n")
		for _, r := range t.CV {
			fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s |\n", r.Learner, r.Split, f3(r.ROCAUC), f3(r.PRAUC), f3(r.BA))
		}
		conformalReport(&sb, t)
	}
	return sb.String()
}

func f3(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.3f", x)
}

// adSet builds the applicability-domain set of the rows labelled for any of tasks.
func adSet(ds *ml.Dataset, threshold float64, tasks ...int) *ml.ADSet {
	var fps [][]uint64
	for _, r := range adRows(ds, tasks...) {
		fps = append(fps, ds.FP[r])
	}
	return ml.NewADSet(fps, threshold, 3)
}

// conformalReport renders the measured coverage of a task's conformal
// prediction sets.
func conformalReport(sb *strings.Builder, t ml.Task) {
	c := t.Conformal
	if !c.Ready() {
		return
	}
	fmt.Fprintf(sb, "\nConformal prediction (Mondrian, per class): %d random-split out-of-fold predictions (%d %s, %d %s) calibrate the p-values. Coverage measured by calibrating on one seeded stratified half and predicting the other, both ways, averaged:\n\n",
		len(c.Positive)+len(c.Negative), len(c.Positive), t.Positive, len(c.Negative), t.Negative)
	fmt.Fprintf(sb, "| confidence | coverage | coverage %s | coverage %s | single-class sets | empty sets |\n|---|---|---|---|---|---|\n", t.Positive, t.Negative)
	for _, v := range c.Coverage {
		fmt.Fprintf(sb, "| %.2f | %s | %s | %s | %s | %s |\n", v.Confidence, f3(v.Overall), f3(v.Positive), f3(v.Negative), f3(v.Single), f3(v.Empty))
	}
}
