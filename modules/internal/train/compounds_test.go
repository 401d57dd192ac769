package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"toxgate/sdk/ml"
)

// The committed bundles carry their training compounds as -compounds
// attaches them: for the smaller modules (the others take minutes to
// curate) attaching again to the committed bundle from the curated training
// data changes no byte, and every module of the plan names a compound for
// each AD reference and labels them for each available task.
func TestCommittedBundlesCarryTheirTrainingCompounds(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	oldData, oldOut := *dataDir, *outDir
	*dataDir, *outDir = filepath.Join(root, "modules", "internal", "data"), filepath.Join(root, "modules")
	defer func() { *dataDir, *outDir = oldData, oldOut }()
	reattach := map[string]bool{"dictrank": true, "aop-kesmies": true, "clinicaldata": true}
	if testing.Short() {
		reattach = map[string]bool{"dictrank": true}
	}
	for module := range compoundPlan {
		for _, file := range []string{"weights.gob.gz", "weights-ai.gob.gz", "weights-aop.gob.gz"} {
			data, err := os.ReadFile(bundlePath(module, file))
			if os.IsNotExist(err) && file != "weights.gob.gz" {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := ml.DecodeBundle(data)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range b.AD {
				if len(a.SMILES) != a.Len() {
					t.Errorf("%s %s: AD set %d names %d compounds for %d references", module, file, i, len(a.SMILES), a.Len())
				}
			}
			for _, task := range b.Tasks {
				if task.Available && len(task.ADLabels) != b.AD[task.AD].Len() {
					t.Errorf("%s %s: task %s labels %d of %d references", module, file, task.Key, len(task.ADLabels), b.AD[task.AD].Len())
				}
			}
		}
		if !reattach[module] {
			continue
		}
		files, err := compoundPlan[module]()
		if err != nil {
			t.Fatal(err)
		}
		for file, srcs := range files {
			data, err := os.ReadFile(bundlePath(module, file))
			if err != nil {
				t.Fatal(err)
			}
			b, err := ml.DecodeBundle(data)
			if err != nil {
				t.Fatal(err)
			}
			if err := attachCompounds(b, srcs); err != nil {
				t.Fatalf("%s %s: %v", module, file, err)
			}
			var buf bytes.Buffer
			if err := b.Encode(&buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), data) {
				t.Errorf("%s %s: attaching the training compounds again changes the committed bundle", module, file)
			}
		}
	}
}

// A bundle refuses compounds whose fingerprints are not its AD set's: one
// structure of the training data left out, or the data in another order.
func TestAttachRefusesOtherFingerprints(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	oldData, oldOut := *dataDir, *outDir
	*dataDir, *outDir = filepath.Join(root, "modules", "internal", "data"), filepath.Join(root, "modules")
	defer func() { *dataDir, *outDir = oldData, oldOut }()
	sets, err := dictrankData()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bundlePath("dictrank", "weights.gob.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(ds *ml.Dataset){
		"one left out": func(ds *ml.Dataset) { ds.FP, ds.SMILES, ds.Y = ds.FP[1:], ds.SMILES[1:], ds.Y[1:] },
		"reordered": func(ds *ml.Dataset) {
			ds.FP[0], ds.FP[len(ds.FP)-1] = ds.FP[len(ds.FP)-1], ds.FP[0]
		},
	} {
		b, err := ml.DecodeBundle(data)
		if err != nil {
			t.Fatal(err)
		}
		ds := *sets[1]
		ds.FP, ds.SMILES, ds.Y = append([][]uint64(nil), ds.FP...), append([]string(nil), ds.SMILES...), append([][]float32(nil), ds.Y...)
		change(&ds)
		if err := attachCompounds(b, perTaskSets([]*ml.Dataset{sets[0], &ds})); err == nil {
			t.Errorf("%s: compounds attached", name)
		}
	}
}
