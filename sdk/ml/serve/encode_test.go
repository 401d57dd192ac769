package serve_test

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"testing"

	ahr "toxgate/modules/ahr/model"
	mitdys "toxgate/modules/aop-mitdys/model"
	clinical "toxgate/modules/clinicaldata/model"
	herg "toxgate/modules/herg/model"
	multitask "toxgate/modules/multitask/model"
	"toxgate/sdk/ml/serve"
	"toxgate/sdk/ml/serve/servetest"
)

// TestEvaluateJSONMatchesEncodingJSON compares the endpoint's own encoder
// with encoding/json on every module bundle built on serve (single and
// multi-task, shared and per-task domains, unavailable tasks, extra
// features), over reference structures and bad inputs.
func TestEvaluateJSONMatchesEncodingJSON(t *testing.T) {
	f, err := os.Open("../../chem/testdata/rdkit_descriptors_tox21_3000.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	step := 7
	if testing.Short() {
		step = 60
	}
	var batches []string
	var batch []string
	for i := 1; i < len(rows); i += step {
		batch = append(batch, rows[i][0])
		if len(batch) == 50 {
			b, _ := json.Marshal(map[string]any{"smiles": batch})
			batches = append(batches, string(b))
			batch = nil
		}
	}
	bodies := append(batches,
		serve.Example, `{"smiles":"CCO"}`, `{"smiles":" [Na+].[O-]C(=O)c1ccccc1 "}`,
		`{"smiles":[ "CCO" , "c1ccccc1"  ]}`, `{"smiles":["CCO","C\u0043O"]}`, `{"smiles":["CCO","CC(C)Xx"]}`,
		`{"smiles":["C<N&","CCO","c1cc","CCO"]}`, `{"smiles":["CCO",""]}`, `{"smiles":["CCO",1]}`, `{"smiles":[]}`, `{"smiles":""}`, `{"smiles":"[Na+]"}`)
	for _, s := range []*serve.Server{herg.Server, multitask.Server, ahr.Server, mitdys.Server, clinical.ML, clinical.AI, clinical.AOP} {
		servetest.CheckJSON(t, s, bodies...)
	}
}
