// Command clinicaldata is the toxgate module serving /clinicaldata/ml/evaluate,
// /clinicaldata/ai/evaluate and /clinicaldata/aop/evaluate: clinical-trial
// toxicity (ClinTox CT_TOX) by a classical learner, a neural network and a
// model on structure plus AOP predictions. Built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/modules/clinicaldata.wasm ./modules/clinicaldata
package main

import (
	"toxgate/modules/clinicaldata/model"
	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func init() {
	module.Register(module.Info{
		Name:        "clinicaldata",
		Version:     model.ML.Bundle.Version,
		Title:       "Clinical-trial toxicity (ClinTox)",
		Description: "Predicts whether a compound fails clinical trials for toxicity (ClinTox CT_TOX) with three models: ml (classical learner), ai (neural network) and aop (structure plus adverse-outcome-pathway predictions MIE, KE1, KE2, apical). Each answers probability, label, applicability domain and nearest-neighbour similarities; one SMILES or a list. The ml endpoint's answer is meant to be saved to a file: ask for CSV with Accept: text/csv.",
		Limits:      abi.Limits{MemoryPages: 1024, TimeoutMS: 20000, MaxInputBytes: 2 << 20},
		Card: abi.ModelCard{
			Summary:     "Three clinical-trial toxicity classifiers (ClinTox CT_TOX): classical (ml), neural network (ai), and structure + AOP predictions (aop).",
			IntendedUse: "Flagging drug candidates that resemble compounds withdrawn from clinical trials for toxicity; a prioritisation aid, not a safety assessment.",
			Data:        "clintox.csv (MoleculeNet ClinTox, 90% share), CT_TOX; standardised (largest fragment), duplicates merged, conflicts dropped. The aop model's extra features come from the aop-kesmies (MIE, KE1, KE2) and dictrank (apical) models trained on their own data.",
			Method:      "Morgan radius-2 counts (2048) + 26 descriptors. ml: L2 logistic regression, gradient-boosted trees, a random forest, Tanimoto kNN or an ensemble averaging their calibrated probabilities, on Morgan radius-2 or radius-1 counts, chosen on the mean of the random- and scaffold-split 5-fold CV ROC-AUC (class-balanced); ai: multi-task MLP (CT_TOX with FDA_APPROVED and 12 Tox21 auxiliary outputs; 128-32 or 256-64 chosen by CV; dropout, AdamW, class-balanced); aop: logistic regression or GBT on the structure features plus the four AOP probabilities, chosen the same way. Charges are neutralised before featurisation (ClinTox charge-state artifact, see MODEL_CARD.md). Probabilities Platt-calibrated. Thresholds maximise out-of-fold balanced accuracy.",
			Validation:  "ml: " + model.ML.Validation() + " | ai: " + model.AI.Validation() + " | aop: " + model.AOP.Validation(),
			Limitations: "In AD when at least 3 training structures have Dice > 0.3 (Morgan r3, 1024 bits). ClinTox has few positives (about 100) and mixes toxicity reasons; FDA approval does not mean non-toxic. The original endpoints were older names of the ALTERNATIVE apical/AI/AOP models; here they are models of ClinTox's labels. Nearest training compounds: with \"nearest_compounds\": true (the model page asks for it) each answer names the training compounds behind nearest_similarities with their SMILES, similarity and experimental label; the page lists them under the result table.",
			Units:       map[string]string{"probability": "1 (fraction)", "nearest_similarities": "Dice similarity, 0-1"},
			References:  []string{"Gayvert K.M. et al., Cell Chem Biol 2016 (ClinTox); MoleculeNet", "modules/clinicaldata/MODEL_CARD.md"},
			License:     "model weights Apache-2.0; data licences in modules/internal/data/SOURCES.md",
		},
	},
		model.ML.Endpoint("/clinicaldata/ml/evaluate", "Clinical-trial toxicity, classical learner (CSV with Accept: text/csv)").SaveAs("clinicaldata-ml"),
		model.AI.Endpoint("/clinicaldata/ai/evaluate", "Clinical-trial toxicity, neural network"),
		model.AOP.Endpoint("/clinicaldata/aop/evaluate", "Clinical-trial toxicity from structure plus AOP predictions"),
	)
}

func main() {}
