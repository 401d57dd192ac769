package model

import (
	"strings"
	"testing"

	"toxgate/sdk/ml/serve/servetest"
)

func TestEndpointContract(t *testing.T) { servetest.CheckCommon(t, Server) }

// The 11 task names of the original /Multitask/evaluate.
var taskNames = []string{"Apical cardiotoxicity", "Aryl hydrocarbon receptor", "Cardiomyocyte myocardial injury",
	"Change action potential", "Change in inotropy", "Change in vasoactivity", "Endothelial injury coagulation",
	"hERG channels inhibitors", "Increase mitochondrial dysfunction", "Oxidative stress", "Valvular injury proliferation"}

func TestElevenTasksUnavailableOnesSaySo(t *testing.T) {
	tasks := Server.Tasks()
	if len(tasks) != len(taskNames) {
		t.Fatalf("%d tasks", len(tasks))
	}
	r := servetest.Row(t, Server, "C2C(N=Cc1ccccc1)=C(N(N2c3ccccc3)C)C")
	avail := 0
	for i, ti := range tasks {
		if ti.Key != taskNames[i] {
			t.Fatalf("task %d is %q, want %q", i, ti.Key, taskNames[i])
		}
		v := r[ti.Key]
		if !ti.Available {
			if v != "not available" || ti.Reason == "" || !strings.Contains(ti.Definition, ti.Reason) {
				t.Errorf("%s: %v, reason %q", ti.Key, v, ti.Reason)
			}
			continue
		}
		avail++
		if f, ok := v.(float64); !ok || (f != 0 && f != 1) {
			t.Errorf("%s: prediction %v", ti.Key, v)
		}
	}
	if avail != 6 {
		t.Fatalf("%d tasks trained, want 6", avail)
	}
	if len(Server.Bundle.Models) != 1 || Server.Bundle.Models[0].Outputs != 6 {
		t.Fatal("want one multi-output model")
	}
}

func TestReferenceCompounds(t *testing.T) {
	terf := servetest.Row(t, Server, "CC(C)(C)c1ccc(C(O)CCCN2CCC(C(O)(c3ccccc3)c3ccccc3)CC2)cc1")
	if terf["hERG channels inhibitors"].(float64) != 1 {
		t.Errorf("terfenadine hERG %v (p=%v)", terf["hERG channels inhibitors"], terf["hERG channels inhibitors_probability"])
	}
	tcdd := servetest.Row(t, Server, "Clc1cc2Oc3cc(Cl)c(Cl)cc3Oc2cc1Cl")
	if tcdd["Aryl hydrocarbon receptor"].(float64) != 1 {
		t.Errorf("TCDD AhR %v", tcdd["Aryl hydrocarbon receptor"])
	}
	glc := servetest.Row(t, Server, "OCC1OC(O)C(O)C(O)C1O")
	for _, k := range []string{"hERG channels inhibitors", "Aryl hydrocarbon receptor", "Increase mitochondrial dysfunction"} {
		if glc[k].(float64) != 0 {
			t.Errorf("glucose %s = %v", k, glc[k])
		}
	}
}
