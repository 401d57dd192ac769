// Command stages is a test module for BenchmarkWasmStages: it runs the hERG
// pipeline over a batch of SMILES up to a stage, so that the cost of each
// stage inside wasm is the difference between two stages. Not served.
package main

import (
	"encoding/json"

	"toxgate/modules/herg/model"
	"toxgate/sdk/abi"
	"toxgate/sdk/chem"
	"toxgate/sdk/ml"
	"toxgate/sdk/ml/serve"
	"toxgate/sdk/module"
)

type in struct {
	SMILES json.RawMessage `json:"smiles"`
	Stage  string          `json:"stage"`
}

// run runs the stages up to in.Stage: "parse" (input list, Standardize),
// "describe" (+ the descriptor features), "morgan" (+ Morgan r2 counts and
// r3 AD bits in one pass), "features" (FeaturesAndAD, i.e. descriptors and
// Morgan together), "gbt" (+ the model), "predict" (+ applicability domain:
// Bundle.Predict), "full" (the endpoint: EvaluateJSON).
func run(i in) (any, error) {
	s := model.Server
	if i.Stage == "full" {
		return s.EvaluateJSON(serve.Input{SMILES: i.SMILES})
	}
	list, _, err := serve.Input{SMILES: i.SMILES}.List()
	if err != nil {
		return nil, err
	}
	dense := make([]float32, s.Bundle.Featurizer.NumFeatures())
	n := 0
	for _, smi := range list {
		m, err := ml.Standardize(smi)
		if err != nil {
			return nil, err
		}
		switch i.Stage {
		case "parse":
			n += m.NumAtoms()
		case "describe":
			n += len(ml.Descriptors(m))
		case "morgan":
			cv, fp := chem.MorganCountsAndBits(m, 2, 2048, 3, 1024)
			n += len(cv.Idx) + fp.Count()
		case "features":
			x, fp := s.Bundle.Featurizer.FeaturesAndAD(m)
			n += len(x.Idx) + len(fp)
		case "gbt":
			x, _ := s.Bundle.Featurizer.FeaturesAndAD(m)
			n += len(s.Bundle.Models[0].Predict(x, dense))
		default: // predict
			x, fp := s.Bundle.Featurizer.FeaturesAndAD(m)
			n += len(s.Bundle.Predict(x, fp, dense))
		}
	}
	return n, nil
}

func init() {
	module.Register(module.Info{
		Name: "hergstages", Version: "1.0.0",
		Description: "The hERG pipeline stopped after a stage (benchmark module).",
		Limits:      abi.Limits{MemoryPages: 1024, TimeoutMS: 60000, MaxInputBytes: 4 << 20},
		Card:        abi.ModelCard{Summary: "Stage timing of /hERG/evaluate inside wasm."},
	}, module.Handle("/herg/stages", run))
}

func main() {}
