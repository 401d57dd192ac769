package model

import (
	"encoding/csv"
	"os"
	"testing"

	"toxgate/sdk/ml"

	"toxgate/sdk/ml/serve"
	"toxgate/sdk/ml/serve/servetest"
)

var servers = map[string]*serve.Server{"ml": ML, "ai": AI, "aop": AOP}

func TestEndpointContract(t *testing.T) {
	for name, s := range servers {
		t.Run(name, func(t *testing.T) { servetest.CheckCommon(t, s) })
	}
}

func TestLearnerKinds(t *testing.T) {
	if k := AI.Bundle.Models[0].Kind; k != "mlp" {
		t.Errorf("ai model is %s, want a neural network", k)
	}
	for _, s := range []*serve.Server{ML, AOP} {
		if k := s.Bundle.Models[0].Kind; k != "gbt" && k != "logreg" && k != "knn" {
			t.Errorf("%s model is %s, want a classical learner", s.Bundle.Name, k)
		}
	}
	// The AOP model reads 4 more features than the structure models.
	if AOP.Bundle.Models[0].NumFeatures != ML.Bundle.Models[0].NumFeatures+4 {
		t.Errorf("aop model has %d features", AOP.Bundle.Models[0].NumFeatures)
	}
}

func TestNeutralAndChargedFormsAgree(t *testing.T) {
	// Standardisation neutralises charges: the ClinTox charge-state artifact
	// (charged SMILES are mostly approved drugs) cannot sway the answer.
	for name, s := range servers {
		a := servetest.Probability(t, s, "CC(=O)Oc1ccccc1C(=O)O", "CT_TOX")
		b := servetest.Probability(t, s, "CC(=O)Oc1ccccc1C(=O)[O-].[Na+]", "CT_TOX")
		if a != b {
			t.Errorf("%s: aspirin %.4f, its sodium salt %.4f", name, a, b)
		}
	}
}

// Aspirin is approved; no model calls it toxic.
func TestAspirinIsNotCalledToxic(t *testing.T) {
	for name, s := range servers {
		if p := servetest.Probability(t, s, "CC(=O)Oc1ccccc1C(=O)O", "CT_TOX"); p >= s.Bundle.Tasks[0].Threshold {
			t.Errorf("%s: aspirin p=%.3f ≥ threshold %.3f", name, p, s.Bundle.Tasks[0].Threshold)
		}
	}
}

func TestCrossValidationFigures(t *testing.T) {
	// Below the 0.80 target once charge states are neutralised (MODEL_CARD.md).
	for name, s := range servers {
		if auc := servetest.CVAUC(s, "CT_TOX", "random"); auc < 0.65 {
			t.Errorf("%s: CT_TOX random-split ROC-AUC %.3f < 0.65", name, auc)
		}
	}
}

// On ClinTox itself (the training data, modules/internal/data/clintox.csv),
// drugs that failed clinical trials for toxicity (CT_TOX 1) score above
// approved ones (FDA_APPROVED 1, CT_TOX 0): each model's mean CT_TOX
// probability is higher for the failed drugs, and it ranks them above the
// approved ones with an in-sample ROC-AUC of at least 0.75. The data are the
// ones the models were fitted to, so this checks that each served bundle is
// the fit of that data; how well the models rank drugs they have not seen
// is the cross-validation figure (TestCrossValidationFigures).
func TestFailedDrugsScoreAboveApprovedOnesOnTheTrainingData(t *testing.T) {
	f, err := os.Open("../../internal/data/clintox.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range servers {
		var failed []bool
		var p []float64
		var sum [2]float64
		var n [2]int
		for _, r := range rows[1:] {
			smiles, approved, ctTox := r[0], r[1] == "1", r[2] == "1"
			if !ctTox && !approved {
				continue
			}
			preds, err := s.Predict(smiles, nil)
			if err != nil {
				continue // unreadable rows are dropped at training too
			}
			prob := ctToxProbability(t, preds)
			failed, p = append(failed, ctTox), append(p, prob)
			k := 0
			if ctTox {
				k = 1
			}
			sum[k] += prob
			n[k]++
		}
		auc := ml.ROCAUC(failed, p)
		meanApproved, meanFailed := sum[0]/float64(n[0]), sum[1]/float64(n[1])
		t.Logf("%s: %d approved (mean p %.3f), %d failed (mean p %.3f), in-sample ROC-AUC %.3f", name, n[0], meanApproved, n[1], meanFailed, auc)
		if n[0] < 1000 || n[1] < 80 {
			t.Fatalf("%s: %d approved and %d failed drugs read; the data changed", name, n[0], n[1])
		}
		if meanFailed <= meanApproved || auc < 0.75 {
			t.Errorf("%s: failed drugs mean p %.3f, approved %.3f, ROC-AUC %.3f (want failed above approved, ROC-AUC >= 0.75)", name, meanFailed, meanApproved, auc)
		}
	}
}

// ctToxProbability is the CT_TOX probability among a bundle's predictions.
func ctToxProbability(t *testing.T, preds []ml.Prediction) float64 {
	t.Helper()
	for _, pr := range preds {
		if pr.Task.Key == "CT_TOX" {
			return pr.Probability
		}
	}
	t.Fatal("no CT_TOX prediction")
	return 0
}
