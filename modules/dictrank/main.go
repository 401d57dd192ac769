// Command dictrank is the toxgate module serving /DICTrank/ML_apical_cardiotox/evaluate: apical cardiotoxicity and dictrank concern. Built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/modules/dictrank.wasm ./modules/dictrank
package main

import (
	"toxgate/modules/dictrank/model"
	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func init() {
	s := model.Server
	module.Register(module.Info{
		Name:        "dictrank",
		Version:     s.Bundle.Version,
		Title:       "Apical cardiotoxicity and DICTrank concern",
		Description: "Predicts apical cardiotoxicity (ALTERNATIVE training set) and the FDA DICTrank drug-induced cardiotoxicity concern, each with probability and its own applicability domain. Accepts one SMILES or a list.",
		Limits:      abi.Limits{MemoryPages: 1024, TimeoutMS: 20000, MaxInputBytes: 2 << 20},
		Card: abi.ModelCard{
			Summary:     "Two classical classifiers: apical cardiotoxicity (ALTERNATIVE) and FDA DICTrank cardiotoxicity concern, from 2D structure.",
			IntendedUse: "Flagging drug candidates for cardiotoxicity concern; not a clinical decision tool.",
			Data:        "alternative_apical_cardiotox_train.csv (ALTERNATIVE ai-ml-api @ c244065f, 763 rows) and dictrank_train.csv (Seal et al. 2024, FDA DICTrank binarised, authors' training split, 930 rows); standardised, duplicates merged, conflicts dropped.",
			Method:      "Morgan radius-2 counts (2048) + 26 descriptors; per task, L2 logistic regression, gradient-boosted trees, a random forest, Tanimoto kNN or an ensemble averaging their calibrated probabilities, chosen on the mean of the random- and scaffold-split 5-fold CV ROC-AUC, with class-balanced weights; Platt-calibrated probabilities; threshold maximises out-of-fold balanced accuracy.",
			Validation:  s.Validation(),
			Limitations: "Each task has its own AD: in AD when at least 3 of its training structures have Dice > 0.3 (Morgan r3, 1024 bits). Small training sets (hundreds of drugs); DICTrank labels are drug-level FDA labelling concern, dose and exposure are ignored. Nearest training compounds: with \"nearest_compounds\": true (the model page asks for it) each answer names the training compounds behind nearest_similarities with their SMILES, similarity and experimental label; the page lists them under the result table.",
			Units:       map[string]string{"probability": "1 (fraction)", "nearest_similarities": "Dice similarity, 0-1"},
			References:  []string{"Seal S. et al., DICTrank, J Chem Inf Model 2024, doi 10.1021/acs.jcim.3c01834", "ALTERNATIVE-EU/ai-ml-api", "modules/dictrank/MODEL_CARD.md"},
			License:     "model weights Apache-2.0; data licences in modules/internal/data/SOURCES.md",
		},
	}, s.Endpoint("/DICTrank/ML_apical_cardiotox/evaluate", "Apical cardiotoxicity and FDA DICTrank concern from SMILES"))
}

func main() {}
