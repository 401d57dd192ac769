package model

import (
	"strings"
	"testing"

	"toxgate/sdk/ml/serve/servetest"
)

func TestEndpointContract(t *testing.T) { servetest.CheckCommon(t, Server) }

func TestNeuralNetworkWithLooseDomain(t *testing.T) {
	if Server.Bundle.Models[0].Kind != "mlp" {
		t.Fatalf("model kind %s, want a neural network", Server.Bundle.Models[0].Kind)
	}
	if rule := Server.Tasks()[0].ADRule; !strings.Contains(rule, "Dice similarity > 0.2") {
		t.Fatalf("AD rule %q, want the 0.2 threshold of AI_MitDys", rule)
	}
}

func TestMitochondrialToxicantsAndInactives(t *testing.T) {
	// Uncouplers and respiratory-chain inhibitors depolarise mitochondria.
	for name, smi := range map[string]string{
		"rotenone":    "COc1cc2c(cc1OC)C1C(=O)c3ccc4c(c3OC1CO2)CC(O4)C(=C)C",
		"FCCP":        "N#CC(C#N)=NNc1ccc(OC(F)(F)F)cc1",
		"niclosamide": "Oc1ccc(Cl)cc1C(=O)Nc1ccc([N+](=O)[O-])cc1Cl",
	} {
		if r := servetest.Row(t, Server, smi); r["SR-MMP"].(float64) != 1 {
			t.Errorf("%s: SR-MMP %v (p=%v), want active", name, r["SR-MMP"], r["SR-MMP_probability"])
		}
	}
	for name, smi := range map[string]string{"glucose": "OCC1OC(O)C(O)C(O)C1O", "caffeine": "Cn1cnc2c1c(=O)n(C)c(=O)n2C"} {
		if r := servetest.Row(t, Server, smi); r["SR-MMP"].(float64) != 0 || r["KE2"].(float64) != 0 {
			t.Errorf("%s: SR-MMP %v KE2 %v, want inactive", name, r["SR-MMP"], r["KE2"])
		}
	}
}

func TestCrossValidationMeetsTarget(t *testing.T) {
	if auc := servetest.CVAUC(Server, "SR-MMP", "random"); auc < 0.85 {
		t.Fatalf("SR-MMP random-split ROC-AUC %.3f < 0.85", auc)
	}
}
