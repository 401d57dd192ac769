// Command multitask is the toxgate module serving /Multitask/evaluate: multitask cardiotoxicity aop network. Built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/modules/multitask.wasm ./modules/multitask
package main

import (
	"toxgate/modules/multitask/model"
	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func init() {
	s := model.Server
	module.Register(module.Info{
		Name:        "multitask",
		Version:     s.Bundle.Version,
		Title:       "Multitask cardiotoxicity AOP network",
		Description: "One multi-output neural network over the 11 cardiotoxicity AOP-network tasks of the original platform; tasks without public training data answer \"not available\" with the reason. Accepts one SMILES or a list.",
		Limits:      abi.Limits{MemoryPages: 1024, TimeoutMS: 20000, MaxInputBytes: 2 << 20},
		Card: abi.ModelCard{
			Summary:     "Shared-trunk multi-output MLP over the 11 tasks of the ALTERNATIVE multitask model; 6 tasks trained on public labels, 5 reported as not available.",
			IntendedUse: "Overview of cardiotoxicity mechanisms (AOP network key events) for a compound.",
			Data:        "Per task (documented in the response and MODEL_CARD.md): apical (ALTERNATIVE), AhR (Tox21), endothelial (ToxCast BioMAP 3C), hERG (TDC hERG_Karim), mitochondrial dysfunction (KE2 + MMP_ratio + SR-MMP), oxidative stress (KE1 + SR-ARE); merged by structure, conflicts dropped per task.",
			Method:      "Morgan radius-2 counts (2048) + 26 standardised descriptors into an MLP (128-32 ReLU, dropout 0.2, one sigmoid per available task, masked class-balanced cross-entropy, AdamW); 5-fold CV random and scaffold; per-task threshold maximises out-of-fold balanced accuracy.",
			Validation:  s.Validation(),
			Limitations: "One AD over all training structures (at least 3 with Dice > 0.3, Morgan r3 1024 bits). Five tasks have no public data and are never guessed. The original was a CDDD mixture-of-experts network (Viganò et al. 2025), not reproduced. Nearest training compounds: with \"nearest_compounds\": true (the model page asks for it) each answer names the training compounds behind nearest_similarities with their SMILES, similarity and experimental label; the page lists them under the result table.",
			Units:       map[string]string{"probability": "1 (fraction)", "nearest_similarities": "Dice similarity, 0-1"},
			References:  []string{"Viganò E.L. et al., J Cheminform 2025, doi 10.1186/s13321-025-01072-7", "modules/multitask/MODEL_CARD.md"},
			License:     "model weights Apache-2.0; data licences in modules/internal/data/SOURCES.md",
		},
	}, s.Endpoint("/Multitask/evaluate", "11 cardiotoxicity AOP-network tasks from SMILES"))
}

func main() {}
