package model

import (
	"testing"

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

func TestApprovedDrugsScoreBelowFailedOnes(t *testing.T) {
	// Aspirin is approved; the models should not call it toxic.
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
