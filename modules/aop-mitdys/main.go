// Command aop-mitdys is the toxgate module serving /AOP/AI_MitDys/evaluate: mitochondrial dysfunction (neural network). Built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/modules/aop-mitdys.wasm ./modules/aop-mitdys
package main

import (
	"toxgate/modules/aop-mitdys/model"
	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func init() {
	s := model.Server
	module.Register(module.Info{
		Name:        "aop-mitdys",
		Version:     s.Bundle.Version,
		Title:       "Mitochondrial dysfunction (neural network)",
		Description: "A multilayer perceptron predicting mitochondrial dysfunction as three related outputs: ALTERNATIVE KE2, TOX21_MMP_ratio (invitrodb v4.3) and Tox21 SR-MMP, with applicability domain (Dice > 0.2). Accepts one SMILES or a list.",
		Limits:      abi.Limits{MemoryPages: 1024, TimeoutMS: 20000, MaxInputBytes: 2 << 20},
		Card: abi.ModelCard{
			Summary:     "Neural network (multi-output MLP) for mitochondrial dysfunction / membrane potential loss from 2D structure.",
			IntendedUse: "Screening chemicals for mitochondrial toxicity (KE2 of the mitochondrial AOP).",
			Data:        "alternative_aop_KE2_mito_dysfunction.csv (ALTERNATIVE), mitotox_subset.csv mmp_ratio_tox21 (MitoTox-AI from EPA invitrodb v4.3) and tox21.csv SR-MMP (MoleculeNet); merged by structure, conflicts per output dropped.",
			Method:      "Morgan radius-2 counts (2048) + 26 standardised descriptors into an MLP (128-32 ReLU, dropout 0.2, 3 sigmoid outputs, masked class-balanced cross-entropy, AdamW); 5-fold CV random and scaffold; per-output threshold maximises out-of-fold balanced accuracy.",
			Validation:  s.Validation(),
			Limitations: "In AD when at least 3 training structures have Dice > 0.2 (Morgan r3, 1024 bits), as the original AI_MitDys. MMP assays flag cytotoxic compounds too; the original was a character-embedding Keras model, not reproduced. Nearest training compounds: with \"nearest_compounds\": true (the model page asks for it) each answer names the training compounds behind nearest_similarities with their SMILES, similarity and experimental label; the page lists them under the result table.",
			Units:       map[string]string{"probability": "1 (fraction)", "nearest_similarities": "Dice similarity, 0-1"},
			References:  []string{"MitoTox-AI (SID-6921) / EPA invitrodb v4.3", "Tox21 SR-MMP", "modules/aop-mitdys/MODEL_CARD.md"},
			License:     "model weights Apache-2.0; data licences in modules/internal/data/SOURCES.md",
		},
	}, s.Endpoint("/AOP/AI_MitDys/evaluate", "Mitochondrial dysfunction (neural network) from SMILES"))
}

func main() {}
