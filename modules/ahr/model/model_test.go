package model

import (
	"testing"

	"toxgate/sdk/ml/serve/servetest"
)

func TestEndpointContract(t *testing.T) { servetest.CheckCommon(t, Server) }

func TestKnownAhRAgonistsAndInactives(t *testing.T) {
	thr := Server.Bundle.Tasks[0].Threshold
	for name, smi := range map[string]string{
		"TCDD":                "Clc1cc2Oc3cc(Cl)c(Cl)cc3Oc2cc1Cl",
		"benzo[a]pyrene":      "c1ccc2c(c1)cc1ccc3cccc4ccc2c1c34",
		"beta-naphthoflavone": "O=c1cc(-c2ccccc2)oc2c1ccc1ccccc12",
	} {
		if p := servetest.Probability(t, Server, smi, "AhR"); p < thr {
			t.Errorf("%s: p=%.3f below threshold %.3f, want active", name, p, thr)
		}
	}
	for name, smi := range map[string]string{
		"glucose": "OCC1OC(O)C(O)C(O)C1O", "ibuprofen": "CC(C)Cc1ccc(cc1)C(C)C(=O)O", "metformin": "CN(C)C(=N)NC(N)=N",
	} {
		if p := servetest.Probability(t, Server, smi, "AhR"); p >= thr {
			t.Errorf("%s: p=%.3f at or above threshold %.3f, want inactive", name, p, thr)
		}
	}
}

func TestCrossValidationMeetsTarget(t *testing.T) {
	if auc := servetest.CVAUC(Server, "AhR", "random"); auc < 0.88 {
		t.Fatalf("random-split ROC-AUC %.3f < 0.88", auc)
	}
}

func BenchmarkOne(b *testing.B) {
	for b.Loop() {
		servetest.Row(b, Server, "Clc1cc2Oc3cc(Cl)c(Cl)cc3Oc2cc1Cl")
	}
}
