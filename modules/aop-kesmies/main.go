// Command aop-kesmies is the toxgate module serving /AOP/ML_KEsMIEs/evaluate: aop mie/ke classifiers (mitochondrial aop). Built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/modules/aop-kesmies.wasm ./modules/aop-kesmies
package main

import (
	"toxgate/modules/aop-kesmies/model"
	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func init() {
	s := model.Server
	module.Register(module.Info{
		Name:        "aop-kesmies",
		Version:     s.Bundle.Version,
		Title:       "AOP MIE/KE classifiers (mitochondrial AOP)",
		Description: "Predicts the molecular initiating event (inhibition of mitochondrial complexes), KE1 (increased oxidative stress) and KE2 (mitochondrial dysfunction) of the mitochondrial cardiotoxicity AOP, each with its own applicability domain. Accepts one SMILES or a list.",
		Limits:      abi.Limits{MemoryPages: 1024, TimeoutMS: 20000, MaxInputBytes: 2 << 20},
		Card: abi.ModelCard{
			Summary:     "Three classical classifiers for the MIE, KE1 and KE2 of the mitochondrial-complex-inhibition AOP (Viganò et al. 2024).",
			IntendedUse: "Mechanistic screening of chemicals along the AOP MIE → KE1 → KE2 → cardiotoxicity.",
			Data:        "ALTERNATIVE platform training sets (ai-ml-api @ c244065f): MIE 208 rows, KE1 576 rows, KE2 4504 rows (90% share); standardised, duplicates merged, conflicts dropped.",
			Method:      "Morgan radius-2 counts (2048) + 26 descriptors; per task, L2 logistic regression, gradient-boosted trees or Tanimoto kNN chosen by 5-fold CV with class-balanced weights; Platt-calibrated probabilities; threshold maximises out-of-fold balanced accuracy.",
			Validation:  s.Validation(),
			Limitations: "Each task has its own AD (at least 3 training structures with Dice > 0.3, Morgan r3 1024 bits). The MIE set is tiny (208 structures, 79% positive) so its figures are uncertain. The original used CDDD embeddings with KNN/LR/XGBoost, not reproduced. Nearest training compounds: with \"nearest_compounds\": true (the model page asks for it) each answer names the training compounds behind nearest_similarities with their SMILES, similarity and experimental label; the page lists them under the result table.",
			Units:       map[string]string{"probability": "1 (fraction)", "nearest_similarities": "Dice similarity, 0-1"},
			References:  []string{"Viganò E.L., Ballabio D., Roncaglioni A., Toxics 2024, 12(1):87, doi 10.3390/toxics12010087", "modules/aop-kesmies/MODEL_CARD.md"},
			License:     "model weights Apache-2.0; data licences in modules/internal/data/SOURCES.md",
		},
	}, s.Endpoint("/AOP/ML_KEsMIEs/evaluate", "MIE, KE1 and KE2 of the mitochondrial AOP from SMILES"))
}

func main() {}
