package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"toxgate/sdk/abi"
	"toxgate/sdk/ml/serve"
	"toxgate/sdk/ml/serve/servetest"
)

func eval(t testing.TB, body string) (serve.Output, error) {
	t.Helper()
	var in serve.Input
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	return Server.Evaluate(in)
}

func row(t testing.TB, smiles string) map[string]any {
	t.Helper()
	out, err := eval(t, fmt.Sprintf(`{"smiles":%q}`, smiles))
	if err != nil {
		t.Fatalf("%s: %v", smiles, err)
	}
	b, _ := json.Marshal(out.Results[0])
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

func TestKnownBlockersAndNonBlockers(t *testing.T) {
	cases := []struct {
		name, smiles string
		blocker      bool
	}{
		{"astemizole", "COc1ccc(CCN2CCC(Nc3nc4ccccc4n3Cc3ccc(F)cc3)CC2)cc1", true},
		{"terfenadine", "CC(C)(C)c1ccc(C(O)CCCN2CCC(C(O)(c3ccccc3)c3ccccc3)CC2)cc1", true},
		{"dofetilide", "CN(CCOc1ccc(NS(C)(=O)=O)cc1)CCc1ccc(NS(C)(=O)=O)cc1", true},
		{"haloperidol", "OC1(CCN(CCCC(=O)c2ccc(F)cc2)CC1)c1ccc(Cl)cc1", true},
		{"aspirin", "CC(=O)Oc1ccccc1C(=O)O", false},
		{"paracetamol", "CC(=O)Nc1ccc(O)cc1", false},
	}
	for _, c := range cases {
		r := row(t, c.smiles)
		p := r["probability"].(float64)
		if (r["prediction"].(float64) == 1) != c.blocker || (p >= Server.Bundle.Tasks[0].Threshold) != c.blocker {
			t.Errorf("%s: prediction %v (p=%.3f), want blocker=%v", c.name, r["prediction"], p, c.blocker)
		}
		if want := map[bool]string{true: "blocker", false: "non-blocker"}[c.blocker]; r["label"] != want {
			t.Errorf("%s: label %v", c.name, r["label"])
		}
		if r["applicability_domain"] != "in AD" {
			t.Errorf("%s: %v, want in AD for a drug-like reference compound", c.name, r["applicability_domain"])
		}
	}
}

func TestFeaturesMatchTraining(t *testing.T) { servetest.CheckFeatures(t, Server) }

func TestOriginalExampleAnswers(t *testing.T) {
	out, err := eval(t, serve.Example)
	if err != nil {
		t.Fatal(err)
	}
	if out.Model != "herg" || out.Version == "" || len(out.Results) != 1 || len(out.Tasks) != 1 {
		t.Fatalf("output %+v", out)
	}
	r := row(t, "C2C(N=Cc1ccccc1)=C(N(N2c3ccccc3)C)C")
	p := r["probability"].(float64)
	if p <= 0 || p >= 1 {
		t.Fatalf("probability %v", p)
	}
	if sims := r["nearest_similarities"].([]any); len(sims) != 3 || sims[0].(float64) < sims[2].(float64) {
		t.Fatalf("nearest similarities %v", sims)
	}
	if !strings.Contains(out.Tasks[0].ADRule, "Dice similarity > 0.3") {
		t.Fatalf("AD rule %q", out.Tasks[0].ADRule)
	}
}

func TestSmallUnrelatedMoleculeIsOutOfDomain(t *testing.T) {
	if r := row(t, "FC(F)(F)C(F)(F)C(F)(F)C(F)(F)S(=O)(=O)O"); r["applicability_domain"] != "out AD" {
		t.Fatalf("perfluorobutanesulfonic acid: %v %v", r["applicability_domain"], r["nearest_similarities"])
	}
}

func TestBatchKeepsOrderAndMatchesSingles(t *testing.T) {
	out, err := eval(t, `{"smiles":["CC(=O)Oc1ccccc1C(=O)O","COc1ccc(CCN2CCC(Nc3nc4ccccc4n3Cc3ccc(F)cc3)CC2)cc1"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 2 {
		t.Fatalf("%d rows", len(out.Results))
	}
	for i, s := range []string{"CC(=O)Oc1ccccc1C(=O)O", "COc1ccc(CCN2CCC(Nc3nc4ccccc4n3Cc3ccc(F)cc3)CC2)cc1"} {
		got, _ := out.Results[i].Get("probability")
		if single := row(t, s)["probability"]; got != single {
			t.Fatalf("row %d: batch %v, single %v", i, got, single)
		}
	}
}

func TestInvalidInputNamesFieldAndPosition(t *testing.T) {
	cases := []struct{ body, field, msg string }{
		{`{"smiles":"C1CC(C"}`, "smiles", "position"},
		{`{"smiles":["CCO","CC(C)Xx"]}`, "", ""}, // scored, with the bad row's error in place
		{`{"smiles":42}`, "smiles", "string"},
		{`{"smiles":[]}`, "smiles", "empty"},
		{`{"smiles":""}`, "smiles", "empty"},
		{fmt.Sprintf(`{"smiles":[%s"C"]}`, strings.Repeat(`"C",`, serve.MaxBatch)), "smiles", "at most"},
	}
	for _, c := range cases {
		out, err := eval(t, c.body)
		if c.field == "" {
			e, _ := out.Results[1].Get("error")
			if re, ok := e.(serve.RowError); err != nil || !ok || re.Field != "smiles[1]" || re.Position != 1 || !strings.Contains(re.Message, "position 5") {
				t.Errorf("%s: %v, row %+v", c.body, err, out.Results)
			}
			continue
		}
		var e *abi.Error
		if !errors.As(err, &e) || e.Kind != abi.KindInvalidInput || e.Field != c.field || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%.60s: error %v, want invalid_input on %s mentioning %q", c.body, err, c.field, c.msg)
		}
	}
}

func TestCrossValidationMeetsTarget(t *testing.T) {
	task := Server.Bundle.Tasks[0]
	for _, r := range task.CV {
		if r.Learner == task.Learner && r.Split == "random" && r.ROCAUC < 0.85 {
			t.Fatalf("random-split ROC-AUC %.3f < 0.85", r.ROCAUC)
		}
	}
}

var benchSMILES = []string{
	"COc1ccc(CCN2CCC(Nc3nc4ccccc4n3Cc3ccc(F)cc3)CC2)cc1",
	"CC(=O)Oc1ccccc1C(=O)O",
	"C2C(N=Cc1ccccc1)=C(N(N2c3ccccc3)C)C",
	"CN(CCOc1ccc(NS(C)(=O)=O)cc1)CCc1ccc(NS(C)(=O)=O)cc1",
}

// BenchmarkOne is parse + features + prediction + AD of one molecule.
func BenchmarkOne(b *testing.B) {
	in := serve.Input{SMILES: json.RawMessage(`"COc1ccc(CCN2CCC(Nc3nc4ccccc4n3Cc3ccc(F)cc3)CC2)cc1"`)}
	for b.Loop() {
		if _, err := Server.Evaluate(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBatch1000 scores a 1000-molecule request.
func BenchmarkBatch1000(b *testing.B) {
	list := make([]string, 1000)
	for i := range list {
		list[i] = benchSMILES[i%len(benchSMILES)]
	}
	raw, _ := json.Marshal(list)
	in := serve.Input{SMILES: raw}
	for b.Loop() {
		if _, err := Server.Evaluate(in); err != nil {
			b.Fatal(err)
		}
	}
}
