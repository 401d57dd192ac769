package ml

import (
	"bytes"
	"compress/gzip"
	"encoding/gob"
	"fmt"
	"io"
)

// Bundle is everything a module needs to serve its predictions: the feature
// recipe, the trained models, the applicability-domain sets and the task
// definitions with their thresholds and cross-validation figures.
type Bundle struct {
	Name, Version string
	Featurizer    Featurizer
	Models        []*Model
	AD            []*ADSet
	Tasks         []Task
	// Command is the command line that produced the bundle.
	Command string
	// FeatureDigest is FeatureDigest(Featurizer) when the bundle was trained.
	FeatureDigest string
}

// Task is one predicted endpoint of a bundle.
type Task struct {
	// Key names the task in outputs ("hERG", "KE1").
	Key string
	// Title is the human-readable task name.
	Title string
	// Definition says what a positive means and which data define it.
	Definition string
	// Positive and Negative are the class labels ("blocker", "non-blocker").
	Positive, Negative string
	// Available is false for a task without public training data; Reason says why.
	Available bool
	Reason    string
	// Model and Output locate the probability: Models[Model].Predict(x)[Output].
	Model, Output int
	// AD indexes the applicability-domain set in Bundle.AD.
	AD int
	// Calibration maps the model output to the reported probability.
	Calibration Calibration
	// Threshold is the (calibrated) probability at or above which the prediction is positive.
	Threshold float64
	// Learner describes the chosen learner; CV its cross-validation figures.
	Learner string
	CV      []CVResult
	// Selection says which cross-validated figure chose the learner among
	// the candidates ("" for the random-split ROC-AUC).
	Selection string
	// Data summarises the training data (after curation).
	Data DataSummary
	// Conformal gives class p-values and prediction sets; nil in a bundle
	// trained without it, whose task then answers no p-values.
	Conformal *Conformal
	// ADLabels are the experimental labels of the references of AD set
	// Task.AD, in its order: 1 positive, 0 negative, -1 not measured for
	// this task; nil when the set names no compounds (ADSet.SMILES).
	ADLabels []int8
}

// DataSummary counts the curated training data of a task.
type DataSummary struct {
	Source    string `json:"source"`
	Rows      int    `json:"rows"`
	Positive  int    `json:"positive"`
	Negative  int    `json:"negative"`
	Dropped   int    `json:"dropped_invalid"`
	Conflicts int    `json:"dropped_conflicts"`
}

// CVResult is the cross-validated score of one learner on one split.
type CVResult struct {
	Learner string `json:"learner"`
	Split   string `json:"split"`
	Scores
}

// Encode writes the bundle as gzip-compressed gob.
func (b *Bundle) Encode(w io.Writer) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("ml: bundle: %w", err)
	}
	if err := gob.NewEncoder(zw).Encode(b); err != nil {
		return fmt.Errorf("ml: encoding bundle %s: %w", b.Name, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("ml: bundle: %w", err)
	}
	return nil
}

// DecodeBundle reads a bundle written by Encode.
func DecodeBundle(data []byte) (*Bundle, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("ml: bundle: %w", err)
	}
	var b Bundle
	if err := gob.NewDecoder(zr).Decode(&b); err != nil {
		return nil, fmt.Errorf("ml: decoding bundle: %w", err)
	}
	for i, a := range b.AD {
		if a == nil {
			continue
		}
		if a.SMILES != nil && len(a.SMILES) != a.Len() {
			return nil, fmt.Errorf("ml: bundle %s: AD set %d names %d compounds for %d references", b.Name, i, len(a.SMILES), a.Len())
		}
		a.prepare()
	}
	for i, t := range b.Tasks {
		if !t.Available {
			continue
		}
		if t.Model < 0 || t.Model >= len(b.Models) || t.AD < 0 || t.AD >= len(b.AD) ||
			t.Output < 0 || t.Output >= b.Models[t.Model].Outputs {
			return nil, fmt.Errorf("ml: bundle %s: task %d (%s) points outside the bundle", b.Name, i, t.Key)
		}
		if t.ADLabels != nil && (b.AD[t.AD] == nil || len(t.ADLabels) != b.AD[t.AD].Len()) {
			return nil, fmt.Errorf("ml: bundle %s: task %d (%s) has %d reference labels for its AD set", b.Name, i, t.Key, len(t.ADLabels))
		}
	}
	return &b, nil
}

// Prediction is a bundle's answer for one task and one molecule.
type Prediction struct {
	Task        *Task
	Probability float64
	Positive    bool
	Domain      Domain
}

// Label returns the class label of the prediction.
func (p Prediction) Label() string {
	if p.Positive {
		return p.Task.Positive
	}
	return p.Task.Negative
}

// Predict evaluates every available task for the standardised molecule
// features x and AD fingerprint fp. Unavailable tasks get a zero Prediction
// with only Task set.
func (b *Bundle) Predict(x Sparse, fp []uint64, dense []float32) []Prediction {
	outs := make([][]float64, len(b.Models))
	doms := make([]*Domain, len(b.AD))
	preds := make([]Prediction, len(b.Tasks))
	for i := range b.Tasks {
		t := &b.Tasks[i]
		preds[i].Task = t
		if !t.Available {
			continue
		}
		if outs[t.Model] == nil {
			outs[t.Model] = b.Models[t.Model].Predict(x, dense)
		}
		if doms[t.AD] == nil {
			d := b.AD[t.AD].Check(fp)
			doms[t.AD] = &d
		}
		p := t.Calibration.Apply(outs[t.Model][t.Output])
		preds[i].Probability = p
		preds[i].Positive = p >= t.Threshold
		preds[i].Domain = *doms[t.AD]
	}
	return preds
}

// AttachCompounds names the references of AD set ad: fps are the
// fingerprints the set was built from (NewADSet), in the same order,
// smiles the compound of each, and labels[t], for every available task t
// of the set, the experimental label of each (1 positive, 0 negative, NaN
// not measured). It fails, changing nothing, when fps are not the set's.
func (b *Bundle) AttachCompounds(ad int, fps [][]uint64, smiles []string, labels map[int][]float32) error {
	if ad < 0 || ad >= len(b.AD) || b.AD[ad] == nil {
		return fmt.Errorf("ml: bundle %s has no AD set %d", b.Name, ad)
	}
	a := b.AD[ad]
	if len(smiles) != len(fps) {
		return fmt.Errorf("ml: bundle %s: %d compounds for %d fingerprints", b.Name, len(smiles), len(fps))
	}
	order, err := a.ReferenceOrder(fps)
	if err != nil {
		return fmt.Errorf("ml: bundle %s AD set %d: %w", b.Name, ad, err)
	}
	tasks := map[int][]int8{}
	for t := range b.Tasks {
		task := &b.Tasks[t]
		if !task.Available || task.AD != ad {
			continue
		}
		y, ok := labels[t]
		if !ok || len(y) != len(fps) {
			return fmt.Errorf("ml: bundle %s: no labels of task %s for the compounds of AD set %d", b.Name, task.Key, ad)
		}
		l := make([]int8, len(order))
		for k, i := range order {
			switch {
			case y[i] != y[i]: // NaN
				l[k] = -1
			case y[i] > 0.5:
				l[k] = 1
			}
		}
		tasks[t] = l
	}
	names := make([]string, len(order))
	for k, i := range order {
		names[k] = smiles[i]
	}
	a.SMILES = names
	for t, l := range tasks {
		b.Tasks[t].ADLabels = l
	}
	return nil
}
