package main

import (
	"fmt"
	"log"
	"sort"
	"strings"

	"toxgate/sdk/ml"
)

// holdoutFraction is the share of labelled structures a held-out scaffold
// split keeps aside.
const holdoutFraction = 0.2

// scaffoldHoldout splits rows into training and test as MoleculeNet's
// scaffold splitter does: scaffold groups sorted largest first fill the
// training set, and the groups that no longer fit in 1 − frac of the rows —
// the rarest scaffolds — form the test set. No scaffold is on both sides.
// Groups of equal size are taken in an order shuffled by seed, not in file
// order, which some sources sort by label.
func scaffoldHoldout(scaffolds []string, frac float64, seed int64) (train, test []int) {
	groups, names := ml.ScaffoldGroups(scaffolds, seed)
	limit := int(float64(len(scaffolds)) * (1 - frac))
	for _, s := range names {
		if g := groups[s]; len(train)+len(g) <= limit {
			train = append(train, g...)
		} else {
			test = append(test, g...)
		}
	}
	sort.Ints(train)
	sort.Ints(test)
	return train, test
}

// rowsOf returns the dataset of the given rows of ds (all its tasks).
func rowsOf(ds *ml.Dataset, rows []int) *ml.Dataset {
	out := &ml.Dataset{Tasks: ds.Tasks, Invalid: ds.Invalid, Conflicts: ds.Conflicts}
	for _, r := range rows {
		out.SMILES = append(out.SMILES, ds.SMILES[r])
		out.Scaffolds = append(out.Scaffolds, ds.Scaffolds[r])
		out.X = append(out.X, ds.X[r])
		out.FP = append(out.FP, ds.FP[r])
		out.Y = append(out.Y, ds.Y[r])
	}
	return out
}

// holdoutMethod trains one way on the training rows: it gets the training
// part of each featurized set and returns the model and the index of the
// set whose features it reads.
type holdoutMethod struct {
	name  string
	train func(sets []*ml.Dataset) (*ml.Model, int, string, error)
}

// holdoutCase is one endpoint of a held-out evaluation.
type holdoutCase struct {
	endpoint string
	sets     []*ml.Dataset // the same labelled structures, featurized per method needs
	methods  []holdoutMethod
}

// evaluateHoldout splits the case's structures by scaffoldHoldout, trains
// each method on the training part (its learner selection, threshold and
// calibration see only those rows) and scores the test part.
func evaluateHoldout(c holdoutCase, sb *strings.Builder) error {
	ds := c.sets[0]
	rows, _ := ds.Labelled(0)
	sc := make([]string, len(rows))
	for k, r := range rows {
		sc[k] = ds.Scaffolds[r]
	}
	trk, tek := scaffoldHoldout(sc, holdoutFraction, *seed)
	pick := func(idx []int) []int {
		out := make([]int, len(idx))
		for k, i := range idx {
			out[k] = rows[i]
		}
		return out
	}
	trainRows, testRows := pick(trk), pick(tek)
	var trainSets []*ml.Dataset
	for _, s := range c.sets {
		trainSets = append(trainSets, rowsOf(s, trainRows))
	}
	y := make([]bool, len(testRows))
	pos := 0
	for k, r := range testRows {
		if y[k] = ds.Y[r][0] > 0.5; y[k] {
			pos++
		}
	}
	fmt.Fprintf(sb, "\n## %s\n\nTraining part %d structures; held-out part %d structures (%d positive) with scaffolds absent from the training part.\n\n", c.endpoint, len(trainRows), len(testRows), pos)
	sb.WriteString("| method | learner chosen on the training part | held-out ROC-AUC | PR-AUC |\n|---|---|---|---|\n")
	for _, m := range c.methods {
		model, set, learner, err := m.train(trainSets)
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.endpoint, m.name, err)
		}
		nf := model.NumFeatures
		dense := make([]float32, nf)
		p := make([]float64, len(testRows))
		for k, r := range testRows {
			p[k] = model.Predict(c.sets[set].X[r], dense)[0]
		}
		auc, pr := ml.ROCAUC(y, p), ml.PRAUC(y, p)
		log.Printf("holdout %-10s %-8s ROC-AUC %.3f PR-AUC %.3f  %s", c.endpoint, m.name, auc, pr, learner)
		fmt.Fprintf(sb, "| %s | %s | %.3f | %.3f |\n", m.name, learner, auc, pr)
	}
	return nil
}

// selectMethod is a holdoutMethod that runs selectAndFitNF with specs on
// set i under def.
func selectMethod(name string, i int, nf int, def taskDef, specs func(*ml.Dataset) []ml.Spec) holdoutMethod {
	return holdoutMethod{name: name, train: func(sets []*ml.Dataset) (*ml.Model, int, string, error) {
		m, task, err := selectAndFitNF(sets[i], 0, specs(sets[i]), def, nf)
		return m, i, task.Learner, err
	}}
}

// randomSelection is def choosing its learner on the random split alone.
func randomSelection(def taskDef) taskDef {
	def.OnScaffolds = false
	return def
}

// holdoutPlan gives, per module, the endpoints -holdout evaluates: the
// current method against the previous one (classicBalanced on the default
// features, chosen on the random-split ROC-AUC).
var holdoutPlan = map[string]func() ([]holdoutCase, error){
	"dictrank": func() ([]holdoutCase, error) {
		sets, err := dictrankData()
		if err != nil {
			return nil, err
		}
		nf := feat.NumFeatures()
		var cases []holdoutCase
		for i, def := range dictrankDefs {
			cases = append(cases, holdoutCase{endpoint: "/DICTrank/ML_apical_cardiotox " + def.Key, sets: []*ml.Dataset{sets[i]},
				methods: []holdoutMethod{
					selectMethod("previous", 0, nf, randomSelection(def), classicBalanced),
					selectMethod("current", 0, nf, def, newStructureSpecs),
				}})
		}
		return cases, nil
	},
	"clinicaldata": func() ([]holdoutCase, error) {
		ds, err := clinicalData()
		if err != nil {
			return nil, err
		}
		sets, err := clinicalSets(ds)
		if err != nil {
			return nil, err
		}
		current := holdoutMethod{name: "current", train: func(tr []*ml.Dataset) (*ml.Model, int, string, error) {
			m, task, fz, err := clinicalML(tr)
			for i, c := range clinicalFeaturizers {
				if c.fz == fz {
					return m, i, task.Learner, err
				}
			}
			return nil, 0, "", fmt.Errorf("clinical ML chose an unknown featurizer %+v", fz)
		}}
		return []holdoutCase{{endpoint: "/clinicaldata/ml CT_TOX", sets: sets, methods: []holdoutMethod{
			selectMethod("previous", 0, feat.NumFeatures(), randomSelection(clinicalDef), classicBalanced),
			current,
		}}}, nil
	},
}

// holdoutModule evaluates a module's holdoutPlan and writes
// <module>/model/HOLDOUT.md.
func holdoutModule(module string) error {
	plan, ok := holdoutPlan[module]
	if !ok {
		log.Printf("%s: no held-out evaluation", module)
		return nil
	}
	cases, err := plan()
	if err != nil {
		return err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "# Held-out scaffold split of %s\n\nGenerated by `GOMAXPROCS=2 go run ./modules/internal/train -holdout -only %s -seed %d -folds %d`; do not edit.\n\n", module, module, *seed, *folds)
	fmt.Fprintf(&sb, "The labelled structures are split as MoleculeNet's scaffold splitter does: Bemis–Murcko scaffold groups, largest first, fill %.0f %% of the rows for training; the rarest scaffolds (groups of equal size in a seeded random order), none of them in the training part, are held out. Each method runs its whole training on the training part only (learner selection by %d-fold cross-validation, threshold, calibration) and is scored once on the held-out part. \"previous\" is the classical learners chosen on the random-split ROC-AUC; \"current\" is the method of the committed weights. The committed weights are then trained on every structure.\n", (1-holdoutFraction)*100, *folds)
	for _, c := range cases {
		if err := evaluateHoldout(c, &sb); err != nil {
			return err
		}
	}
	return writeFile(bundlePath(module, "HOLDOUT.md"), func(f fileWriter) error {
		_, err := f.WriteString(sb.String())
		return err
	})
}
