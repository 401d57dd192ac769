package main

import (
	"log"
	"math"
	"strings"

	"toxgate/sdk/ml"
)

// labelSource is one public label column feeding a multitask task; with
// anyOf, the label is 1 when any of those columns is 1 and 0 when all the
// measured ones are 0 (col is then ignored).
type labelSource struct {
	file, smiles, col string
	anyOf             []string
}

// mtTask maps one of the original's 11 task names to public labels, or says
// why none exist.
type mtTask struct {
	def     taskDef
	sources []labelSource
	reason  string // set when no public data measure the task
}

// multitaskTasks are the original /Multitask/evaluate tasks, in its order.
var multitaskTasks = []mtTask{
	{def: taskDef{Key: "Apical cardiotoxicity", Title: "Apical cardiotoxicity",
		Definition: "Apical cardiotoxicity labels of the ALTERNATIVE platform's training set."},
		sources: []labelSource{{file: "alternative_apical_cardiotox_train.csv", smiles: "smiles", col: "labels"}}},
	{def: taskDef{Key: "Aryl hydrocarbon receptor", Title: "Aryl hydrocarbon receptor activation",
		Definition: "Active in the Tox21 AhR agonist assay (tox21 NR-AhR; ToxCast TOX21_AhR_LUC_Agonist)."},
		sources: []labelSource{{file: "tox21.csv", smiles: "smiles", col: "NR-AhR"}, {file: "toxcast_subset.csv", smiles: "smiles", col: "TOX21_AhR_LUC_Agonist"}}},
	{def: taskDef{Key: "Cardiomyocyte myocardial injury", Title: "Cardiomyocyte myocardial injury"},
		reason: "no public compound-level labels in the project's data (the original used curated NIH ICE/ChEMBL/FDA sets that are not public)"},
	{def: taskDef{Key: "Change action potential", Title: "Change in cardiac action potential"},
		reason: "no public compound-level action-potential (e.g. iPSC-cardiomyocyte MEA) labels in the project's data; hERG block is reported as its own task"},
	{def: taskDef{Key: "Change in inotropy", Title: "Change in inotropy"},
		reason: "no public compound-level contractility labels in the project's data"},
	{def: taskDef{Key: "Change in vasoactivity", Title: "Change in vasoactivity"},
		reason: "no public compound-level vascular tone labels in the project's data"},
	{def: taskDef{Key: "Endothelial injury coagulation", Title: "Endothelial injury / coagulation",
		Definition: "Pro-coagulant response of primary human endothelial cells (BioMAP 3C, HUVEC): tissue factor up (BSK_3C_TissueFactor_up) or thrombomodulin down (BSK_3C_Thrombomodulin_down); negative when inactive in the assay."},
		sources: []labelSource{{file: "toxcast_subset.csv", smiles: "smiles", anyOf: []string{"BSK_3C_TissueFactor_up", "BSK_3C_Thrombomodulin_down"}}}},
	{def: taskDef{Key: "hERG channels inhibitors", Title: "hERG channel inhibition",
		Definition: "hERG IC50 < 10 µM (TDC hERG_Karim)."},
		sources: []labelSource{{file: "herg_karim.csv", smiles: "smiles", col: "Y"}}},
	{def: taskDef{Key: "Increase mitochondrial dysfunction", Title: "Increased mitochondrial dysfunction",
		Definition: "Mitochondrial dysfunction: ALTERNATIVE KE2 labels, TOX21_MMP_ratio hits (invitrodb v4.3) and Tox21 SR-MMP actives."},
		sources: []labelSource{{file: "alternative_aop_KE2_mito_dysfunction.csv", smiles: "smiles", col: "labels"}, {file: "mitotox_subset.csv", smiles: "canonical_smiles", col: "mmp_ratio_tox21"}, {file: "tox21.csv", smiles: "smiles", col: "SR-MMP"}}},
	{def: taskDef{Key: "Oxidative stress", Title: "Oxidative stress",
		Definition: "Oxidative stress: ALTERNATIVE KE1 labels and Tox21 SR-ARE (Nrf2/antioxidant response element) actives."},
		sources: []labelSource{{file: "alternative_aop_KE1_oxidative_stress_train.csv", smiles: "smiles", col: "labels"}, {file: "tox21.csv", smiles: "smiles", col: "SR-ARE"}}},
	{def: taskDef{Key: "Valvular injury proliferation", Title: "Valvular injury / proliferation"},
		reason: "no public compound-level labels in the project's data (5-HT2B agonism, the known mechanism, is not among the ToxCast columns available)"},
}

// multitaskData curates the labels of the available multitask tasks as one
// multi-task set, its columns in the order of the available tasks.
func multitaskData() (*ml.Dataset, error) {
	var avail []int // indices into multitaskTasks of the trained tasks
	for i, t := range multitaskTasks {
		if t.reason == "" {
			avail = append(avail, i)
		}
	}
	var recs []ml.Record
	keys := make([]string, len(avail))
	for out, i := range avail {
		t := multitaskTasks[i]
		keys[out] = t.def.Key
		for _, src := range t.sources {
			r, err := readSource(src)
			if err != nil {
				return nil, err
			}
			recs = append(recs, widen(r, out, len(avail))...)
		}
	}
	ds := ml.Curate(feat, keys, recs)
	log.Printf("Multitask: %d records -> %d structures", len(recs), len(ds.X))
	return ds, nil
}

func trainMultitask() error {
	ds, err := multitaskData()
	if err != nil {
		return err
	}
	keys := ds.Tasks
	spec := mlpSpec([]int{128, 32}, 15)
	res, thr, cal, conf, err := cvMulti(ds, spec, keys)
	if err != nil {
		return err
	}
	m, err := ml.Fit(spec, ds.X, ds.Y, feat.NumFeatures())
	if err != nil {
		return err
	}
	all := make([]int, len(keys))
	for k := range all {
		all[k] = k
	}
	b := &ml.Bundle{Name: "multitask", Version: "1.0.0", Featurizer: feat, Models: []*ml.Model{m},
		AD: []*ml.ADSet{adSet(ds, 0.3, all...)}}
	out := 0
	for _, t := range multitaskTasks {
		task := ml.Task{Key: t.def.Key, Title: t.def.Title, Definition: t.def.Definition, Positive: "active", Negative: "inactive"}
		if t.reason != "" {
			task.Reason = t.reason
			task.Definition = "not available: " + t.reason
		} else {
			var src string
			for k, s := range t.sources {
				if k > 0 {
					src += " + "
				}
				src += s.file + " " + s.col + strings.Join(s.anyOf, " or ")
			}
			task.Available, task.Model, task.Output, task.AD = true, 0, out, 0
			task.Threshold, task.Calibration, task.Learner, task.CV, task.Data = thr[out], cal[out], spec.String(), res[out], ds.Summary(out, src)
			task.Conformal = conf[out]
			out++
		}
		b.Tasks = append(b.Tasks, task)
	}
	if err := attachCompounds(b, multitaskSets(ds)); err != nil {
		return err
	}
	return writeBundle("multitask", b)
}

// readSource reads one label source, OR-ing anyOf columns into one label.
func readSource(src labelSource) ([]ml.Record, error) {
	if len(src.anyOf) == 0 {
		return readCSV(src.file, src.smiles, src.col)
	}
	r, err := readCSV(src.file, src.smiles, src.anyOf...)
	if err != nil {
		return nil, err
	}
	for i := range r {
		v := float32(math.NaN())
		for _, l := range r[i].Labels {
			switch {
			case l == 1:
				v = 1
			case l == 0 && math.IsNaN(float64(v)):
				v = 0
			}
		}
		r[i].Labels = []float32{v}
	}
	return r, nil
}
