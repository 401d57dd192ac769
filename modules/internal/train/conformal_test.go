package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"toxgate/sdk/ml"
)

// heldOutSeed differs from the training seed, so that the halves below are
// not the ones training measured its coverage on.
const heldOutSeed = 7

// Every available task of every committed bundle has a conformal predictor,
// and its prediction sets cover held-out real data at the requested
// confidence, within 3 points: its calibration examples (random-split
// out-of-fold predictions of the training data, each from a model that did
// not see the row) are split into halves; one half calibrates, the other is
// predicted. The coverage training stored (and the model cards state) is
// within 3 points as well. Tasks with fewer than 1,000 calibration
// examples, whose measurement varies more by chance, get the binomial error
// of their half added to the 3 points.
func TestConformalCoverageOnHeldOutData(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(root, "modules", "*", "model", "weights*.gob.gz"))
	shared, _ := filepath.Glob(filepath.Join(root, "modules", "internal", "bundles", "*.gob.gz"))
	checked := map[string]bool{}
	for _, path := range append(paths, shared...) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ml.DecodeBundle(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, task := range b.Tasks {
			c := task.Conformal
			if !task.Available {
				continue
			}
			if !c.Ready() {
				t.Errorf("%s %s: no conformal predictor; retrain with %s", b.Name, task.Key, b.Command)
				continue
			}
			checked[b.Name] = true
			y, p := calibrationExamples(c)
			held := ml.MeasureCoverage(y, p, ml.ConformalLevels, heldOutSeed)
			for l, conf := range ml.ConformalLevels {
				tol := 0.03
				if n := len(y); n < 1000 {
					tol += 2 * math.Sqrt(conf*(1-conf)/float64(n/2))
				}
				if got := held[l].Overall; math.Abs(got-conf) > tol {
					t.Errorf("%s %s: held-out coverage %.3f at %.2f (tolerance %.3f)", b.Name, task.Key, got, conf, tol)
				}
				stored, ok := c.CoverageAt(conf)
				if !ok || math.Abs(stored.Overall-conf) > tol {
					t.Errorf("%s %s: stored coverage %+v at %.2f", b.Name, task.Key, stored, conf)
				}
			}
			t.Logf("%s %s (n %d): held-out coverage %.3f / %.3f / %.3f at %v", b.Name, task.Key, len(y),
				held[0].Overall, held[1].Overall, held[2].Overall, ml.ConformalLevels)
		}
	}
	if len(checked) < 9 {
		t.Errorf("checked %d bundles, want every structure model's", len(checked))
	}
}

// calibrationExamples returns the labels and calibrated positive-class
// probabilities of a conformal predictor's calibration examples
// (α = 1 − p for a positive, α = p for a negative).
func calibrationExamples(c *ml.Conformal) ([]bool, []float64) {
	var y []bool
	var p []float64
	for _, a := range c.Positive {
		y, p = append(y, true), append(p, 1-a)
	}
	for _, a := range c.Negative {
		y, p = append(y, false), append(p, a)
	}
	return y, p
}
