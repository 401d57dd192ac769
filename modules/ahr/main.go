// Command ahr is the toxgate module serving /AHR/evaluate: aryl hydrocarbon receptor activation. Built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/modules/ahr.wasm ./modules/ahr
package main

import (
	"toxgate/modules/ahr/model"
	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func init() {
	s := model.Server
	module.Register(module.Info{
		Name:        "ahr",
		Version:     s.Bundle.Version,
		Title:       "Aryl hydrocarbon receptor activation",
		Description: "Predicts whether a compound activates the aryl hydrocarbon receptor (Tox21 AhR agonist assay), with probability, applicability domain and nearest-neighbour similarities. Accepts one SMILES or a list.",
		Limits:      abi.Limits{MemoryPages: 1024, TimeoutMS: 20000, MaxInputBytes: 2 << 20},
		Card: abi.ModelCard{
			Summary:     "AhR agonist classifier (Tox21 NR-AhR) from 2D structure.",
			IntendedUse: "Screening chemicals for dioxin-like AhR activation; prioritising for in-vitro testing.",
			Data:        "tox21.csv NR-AhR (MoleculeNet Tox21, 90% share) merged with the same assay's ToxCast record (TOX21_AhR_LUC_Agonist) for further structures; standardised (largest fragment), duplicates merged, conflicting duplicates dropped.",
			Method:      "Morgan radius-2 counts (2048, log2(1+count)) + 26 descriptors from sdk/chem; L2 logistic regression vs gradient-boosted trees chosen by 5-fold CV (class-balanced weights); threshold maximises balanced accuracy on out-of-fold predictions.",
			Validation:  s.Validation(),
			Limitations: "In AD when at least 3 training structures have Dice > 0.3 (Morgan r3, 1024 bits). Luciferase reporter assay: autofluorescent/cytotoxic compounds can be false positives; no potency is predicted; the original platform used Mordred descriptors, not reproduced. Nearest training compounds: with \"nearest_compounds\": true (the model page asks for it) each answer names the training compounds behind nearest_similarities with their SMILES, similarity and experimental label; the page lists them under the result table.",
			Units:       map[string]string{"probability": "1 (fraction)", "nearest_similarities": "Dice similarity, 0-1"},
			References:  []string{"Tox21 Data Challenge / MoleculeNet Tox21", "modules/ahr/MODEL_CARD.md"},
			License:     "model weights Apache-2.0; data licences in modules/internal/data/SOURCES.md",
		},
	}, s.Endpoint("/AHR/evaluate", "AhR activation prediction from SMILES"))
}

func main() {}
