package main

import (
	"log"

	"toxgate/sdk/ml"
)

// classicSpecs are the classical learners compared for an "ML" endpoint.
func classicSpecs(balanced bool) []ml.Spec {
	return []ml.Spec{
		{Kind: ml.KindLogReg, L2: 1e-3, Balanced: balanced, Seed: *seed},
		{Kind: ml.KindGBT, Trees: 300, Depth: 6, Rate: 0.08, Balanced: balanced, Seed: *seed},
	}
}

// hergData curates the hERG training set.
func hergData() (*ml.Dataset, error) {
	recs, err := readCSV("herg_karim.csv", "smiles", "Y")
	if err != nil {
		return nil, err
	}
	ds := ml.Curate(feat, []string{"hERG"}, recs)
	log.Printf("hERG: %d records -> %d structures", len(recs), len(ds.X))
	return ds, nil
}

func trainHERG() error {
	ds, err := hergData()
	if err != nil {
		return err
	}
	m, task, err := selectAndFit(ds, 0, classicSpecs(false), taskDef{
		Key: "hERG", Title: "hERG channel blocker",
		Definition: "Blocks the hERG (Kv11.1) potassium channel with IC50 < 10 µM (Karim et al. 2021 curation).",
		Positive:   "blocker", Negative: "non-blocker", Source: "herg_karim.csv (TDC hERG_Karim)",
	})
	if err != nil {
		return err
	}
	b := &ml.Bundle{
		Name: "herg", Version: "1.0.0", Featurizer: feat,
		Models: []*ml.Model{m}, AD: []*ml.ADSet{adSet(ds, 0.3, 0)}, Tasks: []ml.Task{task},
	}
	if err := attachCompounds(b, oneSet(ds)); err != nil {
		return err
	}
	return writeBundle("herg", b)
}
