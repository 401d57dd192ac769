package serve_test

import (
	"testing"

	ahr "toxgate/modules/ahr/model"
	kesmies "toxgate/modules/aop-kesmies/model"
	mitdys "toxgate/modules/aop-mitdys/model"
	clinical "toxgate/modules/clinicaldata/model"
	dictrank "toxgate/modules/dictrank/model"
	herg "toxgate/modules/herg/model"
	multitask "toxgate/modules/multitask/model"
	"toxgate/sdk/ml/serve"
	"toxgate/sdk/ml/serve/servetest"
)

// TestEveryBundleNamesItsNearestCompounds: every module bundle built on
// serve (single and multi-task, shared and per-task domains, unavailable
// tasks, extra features) carries its training compounds, and a request with
// nearest_compounds answers, after the unchanged members, the compounds
// behind nearest_similarities with their labels (servetest.CheckNearest).
func TestEveryBundleNamesItsNearestCompounds(t *testing.T) {
	smiles := []string{"C2C(N=Cc1ccccc1)=C(N(N2c3ccccc3)C)C", "CC(=O)Oc1ccccc1C(=O)O", "CCO",
		"CN1CCC[C@H]1c1cccnc1", "O=C(O)c1ccccc1O", "Clc1ccc(cc1)C(c1ccc(Cl)cc1)C(Cl)(Cl)Cl", "[Na+].[Cl-].CCCCCCCCCCCCCCCC"}
	for name, s := range map[string]*serve.Server{"herg": herg.Server, "multitask": multitask.Server, "ahr": ahr.Server,
		"aop-mitdys": mitdys.Server, "aop-kesmies": kesmies.Server, "dictrank": dictrank.Server,
		"clinicaldata-ml": clinical.ML, "clinicaldata-ai": clinical.AI, "clinicaldata-aop": clinical.AOP} {
		t.Run(name, func(t *testing.T) {
			for i, ad := range s.Bundle.AD {
				if len(ad.SMILES) != ad.Len() {
					t.Fatalf("AD set %d names %d compounds for %d references", i, len(ad.SMILES), ad.Len())
				}
			}
			servetest.CheckNearest(t, s, smiles...)
		})
	}
}
