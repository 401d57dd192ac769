package main

import (
	"fmt"
	"log"
	"os"

	"toxgate/modules/internal/aopfeat"
	"toxgate/sdk/ml"
)

// single curates one labelled CSV as a one-task dataset.
func single(file, smilesCol, labelCol, task string) (*ml.Dataset, error) {
	recs, err := readCSV(file, smilesCol, labelCol)
	if err != nil {
		return nil, err
	}
	ds := ml.Curate(feat, []string{task}, recs)
	log.Printf("%s: %d records -> %d structures", task, len(recs), len(ds.X))
	return ds, nil
}

// perTask trains one classical model per task definition, each on its own
// dataset with its own applicability-domain set, into one bundle.
func perTask(name string, defs []taskDef, sets []*ml.Dataset, specs func(*ml.Dataset) []ml.Spec) error {
	b := &ml.Bundle{Name: name, Version: "1.0.0", Featurizer: feat}
	for i, def := range defs {
		m, task, err := selectAndFit(sets[i], 0, specs(sets[i]), def)
		if err != nil {
			return err
		}
		task.Model, task.Output, task.AD = len(b.Models), 0, len(b.AD)
		b.Models = append(b.Models, m)
		b.AD = append(b.AD, adSet(sets[i], 0.3, 0))
		b.Tasks = append(b.Tasks, task)
	}
	if err := attachCompounds(b, perTaskSets(sets)); err != nil {
		return err
	}
	return writeBundle(name, b)
}

// classicBalanced are the class-balanced classical learners; small data sets
// (under 3000 structures) also try stronger regularisation and shallower trees.
func classicBalanced(ds *ml.Dataset) []ml.Spec {
	specs := classicSpecs(true)
	if len(ds.X) < 3000 {
		specs = append(specs,
			ml.Spec{Kind: ml.KindLogReg, L2: 1e-2, Balanced: true, Seed: *seed},
			ml.Spec{Kind: ml.KindGBT, Trees: 400, Depth: 3, Rate: 0.05, ColSample: 0.3, Balanced: true, Seed: *seed},
			ml.Spec{Kind: ml.KindKNN, Trees: 7, Seed: *seed},
		)
	}
	return specs
}

// newStructureSpecs are the candidates of the endpoints judged on
// structures unlike their training set (apical, DICTrank, CT_TOX):
// classicBalanced, a deeper, more regularised GBT, ensembles that average
// the calibrated probabilities of a Tanimoto kNN, that GBT and a logistic
// regression, and a class-balanced random forest of fully grown trees (the
// published DICTrank baseline's learner).
func newStructureSpecs(ds *ml.Dataset) []ml.Spec {
	gbt8 := ml.Spec{Kind: ml.KindGBT, Trees: 300, Depth: 8, Rate: 0.05, Subsample: 0.6, ColSample: 0.3, L2: 3, Balanced: true, Seed: *seed}
	lr := ml.Spec{Kind: ml.KindLogReg, L2: 1e-2, Balanced: true, Seed: *seed}
	knn5 := ml.Spec{Kind: ml.KindKNN, Trees: 5, Seed: *seed}
	return append(classicBalanced(ds), gbt8,
		ensembleSpec(knn5, gbt8, lr),
		ensembleSpec(knn5, gbt8),
		ml.Spec{Kind: ml.KindRF, Trees: 300, Balanced: true, Seed: *seed})
}

// ensembleSpec averages the calibrated probabilities of members.
func ensembleSpec(members ...ml.Spec) ml.Spec {
	return ml.Spec{Kind: ml.KindEnsemble, Members: members, Seed: *seed}
}

// ahrData curates the AhR training set.
func ahrData() (*ml.Dataset, error) {
	recs, err := readCSV("tox21.csv", "smiles", "NR-AhR")
	if err != nil {
		return nil, err
	}
	more, err := readCSV("toxcast_subset.csv", "smiles", "TOX21_AhR_LUC_Agonist")
	if err != nil {
		return nil, err
	}
	ds := ml.Curate(feat, []string{"AhR"}, append(recs, more...))
	log.Printf("AhR: %d records -> %d structures", len(recs)+len(more), len(ds.X))
	return ds, nil
}

func trainAHR() error {
	ds, err := ahrData()
	if err != nil {
		return err
	}
	return perTask("ahr", []taskDef{{
		Key: "AhR", Title: "Aryl hydrocarbon receptor agonist",
		Definition: "Active in the Tox21 AhR agonist luciferase assay (tox21 NR-AhR, with the same assay's ToxCast record TOX21_AhR_LUC_Agonist for structures outside the MoleculeNet Tox21 set).",
		Positive:   "active", Negative: "inactive",
		Source: "tox21.csv NR-AhR + toxcast_subset.csv TOX21_AhR_LUC_Agonist",
	}}, []*ml.Dataset{ds}, classicBalanced)
}

// dictrankData curates the apical and DICTrank training sets.
func dictrankData() ([]*ml.Dataset, error) {
	apical, err := single("alternative_apical_cardiotox_train.csv", "smiles", "labels", "apical")
	if err != nil {
		return nil, err
	}
	dict, err := single("dictrank_train.csv", "Standardized_SMILES", "DICTrank", "DICTrank")
	if err != nil {
		return nil, err
	}
	return []*ml.Dataset{apical, dict}, nil
}

// dictrankDefs are the tasks of the dictrank bundle, in the order of dictrankData.
var dictrankDefs = []taskDef{
	{Key: "apical", Title: "Apical cardiotoxicity", Positive: "Active", Negative: "Inactive",
		Definition:  "Apical cardiotoxicity label of the ALTERNATIVE platform's training set (alternative_apical_cardiotox_train.csv).",
		Source:      "alternative_apical_cardiotox_train.csv",
		OnScaffolds: true},
	{Key: "DICTrank", Title: "FDA DICTrank cardiotoxicity concern", Positive: "concern", Negative: "no concern",
		Definition:  "FDA Drug-Induced Cardiotoxicity Rank: 1 = most or less concern, 0 = no concern (Seal et al. 2024 binarisation; ambiguous drugs excluded).",
		Source:      "dictrank_train.csv (authors' training split)",
		OnScaffolds: true},
}

func trainDICTrank() error {
	sets, err := dictrankData()
	if err != nil {
		return err
	}
	return perTask("dictrank", dictrankDefs, sets, newStructureSpecs)
}

// kesmiesData curates the MIE, KE1 and KE2 training sets.
func kesmiesData() ([]*ml.Dataset, error) {
	var sets []*ml.Dataset
	for _, f := range []struct{ file, task string }{
		{"alternative_aop_MIE_mito_complex_inhibition_train.csv", "MIE"},
		{"alternative_aop_KE1_oxidative_stress_train.csv", "KE1"},
		{"alternative_aop_KE2_mito_dysfunction.csv", "KE2"},
	} {
		ds, err := single(f.file, "smiles", "labels", f.task)
		if err != nil {
			return nil, err
		}
		sets = append(sets, ds)
	}
	return sets, nil
}

func trainKEsMIEs() error {
	sets, err := kesmiesData()
	if err != nil {
		return err
	}
	return perTask("aop-kesmies", aopDefs, sets, classicBalanced)
}

var aopDefs = []taskDef{
	{Key: "MIE", Title: "MIE: inhibition of mitochondrial complexes", Positive: "active", Negative: "inactive",
		Definition: "Molecular initiating event of the mitochondrial AOP (Viganò et al. 2024): inhibits a mitochondrial respiratory-chain complex.",
		Source:     "alternative_aop_MIE_mito_complex_inhibition_train.csv"},
	{Key: "KE1", Title: "KE1: increased oxidative stress", Positive: "active", Negative: "inactive",
		Definition: "Key event 1: increases oxidative stress.",
		Source:     "alternative_aop_KE1_oxidative_stress_train.csv"},
	{Key: "KE2", Title: "KE2: mitochondrial dysfunction", Positive: "active", Negative: "inactive",
		Definition: "Key event 2: causes mitochondrial dysfunction.",
		Source:     "alternative_aop_KE2_mito_dysfunction.csv"},
}

// mlpSpec is the neural network of the "AI" endpoints.
func mlpSpec(hidden []int, epochs int) ml.Spec {
	return ml.Spec{Kind: ml.KindMLP, Hidden: hidden, Epochs: epochs, Rate: 1e-3, L2: 1e-4, Dropout: 0.2, Balanced: true, Seed: *seed}
}

// mitdysData curates the three mitochondrial-dysfunction label sets as one
// multi-task set.
func mitdysData() (*ml.Dataset, error) {
	tasks := []string{"KE2", "MMP_ratio", "SR-MMP"}
	var recs []ml.Record
	for i, src := range []struct{ file, smi, col string }{
		{"alternative_aop_KE2_mito_dysfunction.csv", "smiles", "labels"},
		{"mitotox_subset.csv", "canonical_smiles", "mmp_ratio_tox21"},
		{"tox21.csv", "smiles", "SR-MMP"},
	} {
		r, err := readCSV(src.file, src.smi, src.col)
		if err != nil {
			return nil, err
		}
		recs = append(recs, widen(r, i, len(tasks))...)
	}
	ds := ml.Curate(feat, tasks, recs)
	log.Printf("MitDys: %d records -> %d structures", len(recs), len(ds.X))
	return ds, nil
}

func trainMitDys() error {
	ds, err := mitdysData()
	if err != nil {
		return err
	}
	tasks := ds.Tasks
	spec := mlpSpec([]int{128, 32}, 25)
	res, thr, cal, conf, err := cvMulti(ds, spec, tasks)
	if err != nil {
		return err
	}
	m, err := ml.Fit(spec, ds.X, ds.Y, feat.NumFeatures())
	if err != nil {
		return err
	}
	defs := []taskDef{
		{Key: "KE2", Title: "Mitochondrial dysfunction (ALTERNATIVE KE2 set)", Positive: "Active", Negative: "Inactive",
			Definition: "Key event 2 of the mitochondrial AOP, labels of the ALTERNATIVE platform's KE2 set.",
			Source:     "alternative_aop_KE2_mito_dysfunction.csv"},
		{Key: "MMP_ratio", Title: "Mitochondrial membrane potential loss (TOX21_MMP_ratio, invitrodb v4.3)", Positive: "Active", Negative: "Inactive",
			Definition: "Hit (hitc ≥ 0.9) in the Tox21 mitochondrial membrane potential ratio assay, EPA invitrodb v4.3.",
			Source:     "mitotox_subset.csv mmp_ratio_tox21"},
		{Key: "SR-MMP", Title: "Mitochondrial membrane potential loss (Tox21 SR-MMP)", Positive: "Active", Negative: "Inactive",
			Definition: "Active in the Tox21 SR-MMP assay (MoleculeNet Tox21).",
			Source:     "tox21.csv SR-MMP"},
	}
	b := &ml.Bundle{Name: "aop-mitdys", Version: "1.0.0", Featurizer: feat, Models: []*ml.Model{m},
		AD: []*ml.ADSet{adSet(ds, 0.2, 0, 1, 2)}}
	for t, def := range defs {
		b.Tasks = append(b.Tasks, ml.Task{Key: def.Key, Title: def.Title, Definition: def.Definition,
			Positive: def.Positive, Negative: def.Negative, Available: true, Model: 0, Output: t, AD: 0,
			Threshold: thr[t], Calibration: cal[t], Learner: spec.String(), CV: res[t], Data: ds.Summary(t, def.Source), Conformal: conf[t]})
	}
	if err := attachCompounds(b, mitdysSets(ds)); err != nil {
		return err
	}
	return writeBundle("aop-mitdys", b)
}

var clinicalDef = taskDef{Key: "CT_TOX", Title: "Clinical-trial toxicity", Positive: "toxic", Negative: "non-toxic",
	Definition:  "Failed clinical trials for toxicity reasons (ClinTox CT_TOX = 1) versus FDA-approved or not failed for toxicity.",
	Source:      "clintox.csv CT_TOX",
	OnScaffolds: true}

func trainClinical() error {
	ds, err := clinicalData()
	if err != nil {
		return err
	}
	// ML: classical learners and their ensembles, on two fingerprints.
	sets, err := clinicalSets(ds)
	if err != nil {
		return err
	}
	mML, tML, fzML, err := clinicalML(sets)
	if err != nil {
		return err
	}
	ad := adSet(ds, 0.3, 0)
	bML := &ml.Bundle{Name: "clinicaldata-ml", Version: "1.0.0", Featurizer: fzML,
		Models: []*ml.Model{mML}, AD: []*ml.ADSet{ad}, Tasks: []ml.Task{tML}}
	if err := attachCompounds(bML, oneSet(ds)); err != nil {
		return err
	}
	if err := writeBundle("clinicaldata", bML); err != nil {
		return err
	}
	// AI: a multi-task neural network (CT_TOX with FDA_APPROVED and the 12
	// Tox21 tasks as auxiliary outputs), architecture chosen by CV on CT_TOX.
	bAI, err := clinicalAI()
	if err != nil {
		return err
	}
	if err := writeBundleAs("clinicaldata", "weights-ai.gob.gz", "CV-ai.md", bAI); err != nil {
		return err
	}
	// AOP: structure plus the AOP models' predictions.
	xs, err := aopFeatures(ds)
	if err != nil {
		return err
	}
	aopDS := *ds
	aopDS.X = xs
	nf := feat.NumFeatures() + len(AOPFeatureNames)
	// Learners that read every feature (kNN compares Morgan bits only, so it
	// would ignore the AOP probabilities).
	var specs []ml.Spec
	for _, s := range classicBalanced(&aopDS) {
		if s.Kind != ml.KindKNN {
			s.ScaleFrom = feat.Bits // standardise the descriptors and the AOP probabilities
			specs = append(specs, s)
		}
	}
	mAOP, tAOP, err := selectAndFitNF(&aopDS, 0, specs, clinicalDef, nf)
	if err != nil {
		return err
	}
	bAOP := &ml.Bundle{Name: "clinicaldata-aop", Version: "1.0.0",
		Featurizer: feat, Models: []*ml.Model{mAOP}, AD: []*ml.ADSet{ad}, Tasks: []ml.Task{tAOP}}
	if err := attachCompounds(bAOP, oneSet(ds)); err != nil {
		return err
	}
	return writeBundleAs("clinicaldata", "weights-aop.gob.gz", "CV-aop.md", bAOP)
}

// clinicalFeaturizers are the features the /clinicaldata/ml learners are
// compared on: the default (Morgan radius 2) with every newStructureSpecs
// candidate, and Morgan radius 1 (atom environments up to the first
// neighbours, which generalise further from the 56 toxic structures) with
// the kNN learners.
var clinicalFeaturizers = []struct {
	fz    ml.Featurizer
	specs func(*ml.Dataset) []ml.Spec
}{
	{feat, newStructureSpecs},
	{ml.Featurizer{Radius: 1, Bits: 2048}, func(*ml.Dataset) []ml.Spec {
		knn5 := ml.Spec{Kind: ml.KindKNN, Trees: 5, Seed: *seed}
		gbt8 := ml.Spec{Kind: ml.KindGBT, Trees: 300, Depth: 8, Rate: 0.05, Subsample: 0.6, ColSample: 0.3, L2: 3, Balanced: true, Seed: *seed}
		return []ml.Spec{knn5, {Kind: ml.KindKNN, Trees: 7, Seed: *seed}, ensembleSpec(knn5, gbt8)}
	}},
}

// clinicalSets curates ClinTox CT_TOX once per clinicalFeaturizers entry;
// the first is ds, and every set holds the same structures in the same order.
func clinicalSets(ds *ml.Dataset) ([]*ml.Dataset, error) {
	sets := []*ml.Dataset{ds}
	for _, c := range clinicalFeaturizers[1:] {
		recs, err := readCSV("clintox.csv", "smiles", "CT_TOX")
		if err != nil {
			return nil, err
		}
		dsf := ml.Curate(c.fz, []string{"CT_TOX"}, recs)
		if len(dsf.SMILES) != len(ds.SMILES) {
			return nil, fmt.Errorf("CT_TOX: %d structures with Morgan r%d, %d with the default", len(dsf.SMILES), c.fz.Radius, len(ds.SMILES))
		}
		for i := range ds.SMILES {
			if dsf.SMILES[i] != ds.SMILES[i] {
				return nil, fmt.Errorf("CT_TOX: structure %d differs between featurizers", i)
			}
		}
		sets = append(sets, dsf)
	}
	return sets, nil
}

// clinicalML selects the /clinicaldata/ml learner and featurizer on the
// cross-validation of every clinicalFeaturizers candidate (sets[i] holds
// the data featurized by clinicalFeaturizers[i]); the report lists them
// all, each learner named with its fingerprint.
func clinicalML(sets []*ml.Dataset) (*ml.Model, ml.Task, ml.Featurizer, error) {
	var (
		best     *ml.Model
		bestTask ml.Task
		bestFz   ml.Featurizer
		all      []ml.CVResult
		bestAUC  = -1.0
	)
	for i, c := range clinicalFeaturizers {
		m, task, err := selectAndFitNF(sets[i], 0, c.specs(sets[i]), clinicalDef, c.fz.NumFeatures())
		if err != nil {
			return nil, task, c.fz, err
		}
		name := fmt.Sprintf("Morgan r%d counts + descriptors: ", c.fz.Radius)
		for _, r := range task.CV {
			r.Learner = name + r.Learner
			all = append(all, r)
		}
		task.Learner = name + task.Learner
		if auc := selectionScore(clinicalDef, task.CV); auc > bestAUC {
			best, bestTask, bestFz, bestAUC = m, task, c.fz, auc
		}
	}
	bestTask.CV = orderResults(all, bestTask.Learner)
	log.Printf("%-10s chosen: %s", clinicalDef.Key, bestTask.Learner)
	return best, bestTask, bestFz, nil
}

// clinicalData curates the ClinTox CT_TOX set of the ML and AOP models.
func clinicalData() (*ml.Dataset, error) {
	return single("clintox.csv", "smiles", "CT_TOX", "CT_TOX")
}

func writeBundleAs(module, weights, report string, b *ml.Bundle) error {
	b.Command = command(module)
	b.FeatureDigest = ml.FeatureDigest(b.Featurizer)
	if err := writeFile(bundlePath(module, weights), func(f fileWriter) error { return b.Encode(f) }); err != nil {
		return fmt.Errorf("%s: %w", weights, err)
	}
	return writeFile(bundlePath(module, report), func(f fileWriter) error {
		_, err := f.WriteString(cvReport(b))
		return err
	})
}

type fileWriter = *os.File

// AOPFeatureNames are the appended AOP features of the clinicaldata/aop model.
var AOPFeatureNames = aopfeat.Names

// aopFeatures appends the AOP models' probabilities to every row's features,
// reading the aop-kesmies and dictrank bundles written by this program.
func aopFeatures(ds *ml.Dataset) ([]ml.Sparse, error) {
	var bundles []*ml.Bundle
	for _, mod := range []string{"aop-kesmies", "dictrank"} {
		data, err := os.ReadFile(bundlePath(mod, "weights.gob.gz"))
		if err != nil {
			return nil, fmt.Errorf("clinicaldata/aop needs the %s bundle (train it first): %w", mod, err)
		}
		b, err := ml.DecodeBundle(data)
		if err != nil {
			return nil, err
		}
		bundles = append(bundles, b)
	}
	src, err := aopfeat.New(bundles...)
	if err != nil {
		return nil, err
	}
	dense := make([]float32, feat.NumFeatures())
	out := make([]ml.Sparse, len(ds.X))
	for i, x := range ds.X {
		out[i] = src.Extend(x, feat.NumFeatures(), dense)
	}
	return out, nil
}

var tox21Tasks = []string{"NR-AR", "NR-AR-LBD", "NR-AhR", "NR-Aromatase", "NR-ER", "NR-ER-LBD",
	"NR-PPAR-gamma", "SR-ARE", "SR-ATAD5", "SR-HSE", "SR-MMP", "SR-p53"}

// clinicalAI trains the /clinicaldata/ai network: output 0 is CT_TOX, the
// others are auxiliary tasks that shape the shared hidden layers.
func clinicalAI() (*ml.Bundle, error) {
	ds, err := clinicalAIData()
	if err != nil {
		return nil, err
	}
	tasks := ds.Tasks
	wide := mlpSpec([]int{256, 64}, 15)
	wide.Dropout = 0.5
	var best *ml.Task
	var bestSpec ml.Spec
	var all []ml.CVResult
	for _, spec := range []ml.Spec{mlpSpec([]int{128, 32}, 25), wide} {
		res, thr, cal, conf, err := cvMulti(ds, spec, tasks)
		if err != nil {
			return nil, err
		}
		all = append(all, res[0]...)
		if best == nil || res[0][0].ROCAUC > best.CV[0].ROCAUC {
			best = &ml.Task{Key: clinicalDef.Key, Title: clinicalDef.Title, Definition: clinicalDef.Definition,
				Positive: clinicalDef.Positive, Negative: clinicalDef.Negative, Available: true,
				Threshold: thr[0], Calibration: cal[0], Learner: spec.String() + ", multi-task with FDA_APPROVED and 12 Tox21 auxiliary outputs",
				CV: res[0], Data: ds.Summary(0, clinicalDef.Source), Conformal: conf[0]}
			bestSpec = spec
		}
	}
	for i := range all {
		all[i].Learner += ", multi-task with FDA_APPROVED and 12 Tox21 auxiliary outputs"
	}
	best.CV = orderResults(all, best.Learner)
	m, err := ml.Fit(bestSpec, ds.X, ds.Y, feat.NumFeatures())
	if err != nil {
		return nil, err
	}
	log.Printf("%-10s chosen: %s, threshold %.3f", "CT_TOX/ai", best.Learner, best.Threshold)
	b := &ml.Bundle{Name: "clinicaldata-ai", Version: "1.0.0", Featurizer: feat, Models: []*ml.Model{m},
		AD: []*ml.ADSet{adSet(ds, 0.3, 0)}, Tasks: []ml.Task{*best}}
	return b, attachCompounds(b, oneSet(ds))
}

// clinicalAIData curates ClinTox (CT_TOX, FDA_APPROVED) with the 12 Tox21
// tasks as one multi-task set; CT_TOX is task 0.
func clinicalAIData() (*ml.Dataset, error) {
	tasks := append([]string{"CT_TOX", "FDA_APPROVED"}, tox21Tasks...)
	ct, err := readCSV("clintox.csv", "smiles", "CT_TOX", "FDA_APPROVED")
	if err != nil {
		return nil, err
	}
	tx, err := readCSV("tox21.csv", "smiles", tox21Tasks...)
	if err != nil {
		return nil, err
	}
	recs := append(widen(ct, 0, len(tasks)), widen(tx, 2, len(tasks))...)
	ds := ml.Curate(feat, tasks, recs)
	log.Printf("clinical AI: %d records -> %d structures", len(recs), len(ds.X))
	return ds, nil
}
