// Command train trains toxgate's structure-based toxicity models from the
// CSVs in modules/internal/data and writes the weight bundles the modules embed.
// Training is deterministic for a given seed:
//
//	GOMAXPROCS=2 go run ./modules/internal/train            # every model
//	GOMAXPROCS=2 go run ./modules/internal/train -only herg # one model
//	GOMAXPROCS=2 go run ./modules/internal/train -compounds # name the training compounds of the committed bundles
//	GOMAXPROCS=2 go run ./modules/internal/train -holdout -only dictrank,clinicaldata # held-out scaffold split
//
// Each model gets 5-fold cross-validation with random and Bemis–Murcko
// scaffold splits; the learner with the best random-split ROC-AUC is kept
// (for the endpoints judged on new structures — apical, DICTrank, CT_TOX —
// the best mean of the random- and scaffold-split ROC-AUC),
// its threshold maximises balanced accuracy on the out-of-fold predictions,
// which also calibrate its Mondrian conformal predictor (sdk/ml Conformal),
// and it is refitted on all data. -holdout scores the training method on a
// held-out scaffold split instead (holdout.go, <module>/model/HOLDOUT.md).
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"
)

var (
	dataDir = flag.String("data", "modules/internal/data", "folder of the training CSVs")
	outDir  = flag.String("out", "modules", "folder holding the module folders")
	only    = flag.String("only", "", "comma-separated model names to train (default all)")
	seed    = flag.Int64("seed", 20240501, "random seed")
	folds   = flag.Int("folds", 5, "cross-validation folds")
	// compounds attaches the training compounds to the committed bundles
	// instead of training (attachModule).
	compounds = flag.Bool("compounds", false, "attach the training compounds and their labels to the committed bundles' AD sets, without retraining")
	// holdoutEval evaluates the current and previous methods on a held-out
	// scaffold split instead of training (holdoutModule).
	holdoutEval = flag.Bool("holdout", false, "evaluate the current and the previous method on a held-out scaffold split (model/HOLDOUT.md), without writing weights")
)

// trainer trains one module's bundle.
type trainer struct {
	name string
	run  func() error
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	all := []trainer{
		{"herg", trainHERG},
		{"ahr", trainAHR},
		{"dictrank", trainDICTrank},
		{"aop-kesmies", trainKEsMIEs},
		{"aop-mitdys", trainMitDys},
		{"clinicaldata", trainClinical},
		{"multitask", trainMultitask},
	}
	want := map[string]bool{}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	for _, t := range all {
		if len(want) > 0 && !want[t.name] {
			continue
		}
		start := time.Now()
		log.Printf("== %s", t.name)
		run := t.run
		if *compounds {
			name := t.name
			run = func() error { return attachModule(name) }
		}
		if *holdoutEval {
			name := t.name
			run = func() error { return holdoutModule(name) }
		}
		if err := run(); err != nil {
			log.Fatalf("train: %s: %v", t.name, err)
		}
		log.Printf("== %s done in %s", t.name, time.Since(start).Round(time.Second))
	}
}

// sharedBundles are the modules whose weights more than one module reads:
// they live in modules/internal/bundles as <module>.gob.gz.
var sharedBundles = map[string]bool{"aop-kesmies": true, "dictrank": true}

// bundlePath is where a module's model package finds file: its weights and
// cross-validation reports in <module>/model, except the weights of
// sharedBundles.
func bundlePath(module, file string) string {
	if sharedBundles[module] && file == "weights.gob.gz" {
		return filepath.Join(*outDir, "internal", "bundles", module+".gob.gz")
	}
	return filepath.Join(*outDir, module, "model", file)
}

func command(name string) string {
	return fmt.Sprintf("GOMAXPROCS=2 go run ./modules/internal/train -only %s -seed %d -folds %d", name, *seed, *folds)
}

func writeFile(path string, write func(f *os.File) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
