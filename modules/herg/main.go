// Command herg is the toxgate module serving /hERG/evaluate: a hERG blocker
// classifier (IC50 < 10 µM) trained on the Karim et al. 2021 set, built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/modules/herg.wasm ./modules/herg
package main

import (
	"toxgate/modules/herg/model"
	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func init() {
	s := model.Server
	module.Register(module.Info{
		Name:        "herg",
		Version:     s.Bundle.Version,
		Title:       "hERG channel blocker",
		Description: "Predicts whether a compound blocks the hERG potassium channel (IC50 < 10 µM), with probability, applicability domain and nearest-neighbour similarities. Accepts one SMILES or a list.",
		Limits:      abi.Limits{MemoryPages: 1024, TimeoutMS: 10000, MaxInputBytes: 2 << 20},
		Card: abi.ModelCard{
			Summary:     "Binary hERG blocker classifier (blocker = IC50 < 10 µM) from 2D structure.",
			IntendedUse: "Early cardiac-safety triage of drug-like small molecules; prioritising compounds for patch-clamp testing. Not a substitute for an in-vitro hERG assay.",
			Data:        "herg_karim.csv: TDC hERG_Karim (Karim et al. 2021, CardioTox net), 90% share kept in the project; standardised (largest fragment), duplicates merged, conflicting duplicates dropped.",
			Method:      "Features: Morgan radius-2 environment counts folded to 2048 (log2(1+count)) plus 26 RDKit-style descriptors, computed by sdk/chem/sdk/ml. Learner chosen by 5-fold CV among L2 logistic regression and gradient-boosted trees; decision threshold maximises balanced accuracy on out-of-fold predictions.",
			Validation:  s.Validation(),
			Limitations: "Applicability domain: in AD when at least 3 training structures have Dice similarity > 0.3 on Morgan radius-3 1024-bit fingerprints; outside it predictions are less reliable. 2D structure only (no stereo); the 10 µM cut-off is binary, no IC50 is predicted; literature labels mix assay types. Nearest training compounds: with \"nearest_compounds\": true (the model page asks for it) each answer names the training compounds behind nearest_similarities with their SMILES, similarity and experimental label; the page lists them under the result table.",
			Units:       map[string]string{"probability": "1 (fraction)", "nearest_similarities": "Dice similarity, 0-1"},
			References:  []string{"Karim A. et al., CardioTox net: a robust predictor for hERG channel blockade, J Cheminform 2021, 13:60 (TDC hERG_Karim)", "modules/herg/MODEL_CARD.md"},
			License:     "CC-BY-4.0 data (TDC); model weights Apache-2.0",
		},
	}, s.Endpoint("/hERG/evaluate", "hERG blocker prediction (IC50 < 10 µM) from SMILES"))
}

func main() {}
