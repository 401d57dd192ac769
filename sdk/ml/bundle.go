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
	// Data summarises the training data (after curation).
	Data DataSummary
	// Conformal gives class p-values and prediction sets; nil in a bundle
	// trained without it, whose task then answers no p-values.
	Conformal *Conformal
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
	for _, a := range b.AD {
		if a != nil {
			a.prepare()
		}
	}
	for i, t := range b.Tasks {
		if !t.Available {
			continue
		}
		if t.Model < 0 || t.Model >= len(b.Models) || t.AD < 0 || t.AD >= len(b.AD) ||
			t.Output < 0 || t.Output >= b.Models[t.Model].Outputs {
			return nil, fmt.Errorf("ml: bundle %s: task %d (%s) points outside the bundle", b.Name, i, t.Key)
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
