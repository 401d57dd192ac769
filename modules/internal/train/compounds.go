package main

import (
	"fmt"
	"log"
	"math"
	"os"

	"toxgate/sdk/ml"
)

// adSource is where the references of one AD set of a bundle come from:
// the rows of ds labelled for any of cols (the rows adSet takes, in its
// order), with, for each bundle task using the set, its column in ds.
type adSource struct {
	ds   *ml.Dataset
	cols []int
	task map[int]int // bundle task index → column of ds
}

// oneSet is the source of a bundle with one task and one AD set over
// column 0 of ds.
func oneSet(ds *ml.Dataset) []adSource {
	return []adSource{{ds: ds, cols: []int{0}, task: map[int]int{0: 0}}}
}

// perTaskSets are the sources of a perTask bundle: task i and AD set i
// from column 0 of sets[i].
func perTaskSets(sets []*ml.Dataset) []adSource {
	out := make([]adSource, len(sets))
	for i, ds := range sets {
		out[i] = adSource{ds: ds, cols: []int{0}, task: map[int]int{i: 0}}
	}
	return out
}

// mitdysSets is the source of the aop-mitdys bundle: one AD set over its
// three tasks, task t from column t.
func mitdysSets(ds *ml.Dataset) []adSource {
	return []adSource{{ds: ds, cols: []int{0, 1, 2}, task: map[int]int{0: 0, 1: 1, 2: 2}}}
}

// multitaskSets is the source of the multitask bundle: one AD set over
// every column, the available tasks (in multitaskTasks order) taking the
// columns in turn.
func multitaskSets(ds *ml.Dataset) []adSource {
	src := adSource{ds: ds, task: map[int]int{}}
	for c := range ds.Tasks {
		src.cols = append(src.cols, c)
	}
	col := 0
	for i, t := range multitaskTasks {
		if t.reason == "" {
			src.task[i] = col
			col++
		}
	}
	return []adSource{src}
}

// attachCompounds names the references of b's AD set i from srcs[i]: the
// SMILES of each and the experimental label of each task using the set
// (ml.Bundle.AttachCompounds, which checks that the fingerprints are the
// set's, in its order).
func attachCompounds(b *ml.Bundle, srcs []adSource) error {
	if len(srcs) != len(b.AD) {
		return fmt.Errorf("%s: %d compound sources for %d AD sets", b.Name, len(srcs), len(b.AD))
	}
	for i, src := range srcs {
		rows := adRows(src.ds, src.cols...)
		fps := make([][]uint64, len(rows))
		smiles := make([]string, len(rows))
		for k, r := range rows {
			fps[k], smiles[k] = src.ds.FP[r], src.ds.SMILES[r]
		}
		labels := map[int][]float32{}
		for t, c := range src.task {
			y := make([]float32, len(rows))
			for k, r := range rows {
				y[k] = src.ds.Y[r][c]
			}
			labels[t] = y
		}
		if err := b.AttachCompounds(i, fps, smiles, labels); err != nil {
			return err
		}
	}
	return nil
}

// adRows are the rows of ds labelled for any of tasks, in order: the rows
// whose fingerprints adSet puts in the AD set.
func adRows(ds *ml.Dataset, tasks ...int) []int {
	var rows []int
	for r, yr := range ds.Y {
		for _, t := range tasks {
			if !math.IsNaN(float64(yr[t])) {
				rows = append(rows, r)
				break
			}
		}
	}
	return rows
}

// compoundPlan is how -compounds rebuilds the sources of a module's bundles:
// for each bundle file of the module, its AD sets' sources.
var compoundPlan = map[string]func() (map[string][]adSource, error){
	"herg": func() (map[string][]adSource, error) {
		ds, err := hergData()
		return map[string][]adSource{"weights.gob.gz": oneSet(ds)}, err
	},
	"ahr": func() (map[string][]adSource, error) {
		ds, err := ahrData()
		return map[string][]adSource{"weights.gob.gz": oneSet(ds)}, err
	},
	"dictrank": func() (map[string][]adSource, error) {
		sets, err := dictrankData()
		return map[string][]adSource{"weights.gob.gz": perTaskSets(sets)}, err
	},
	"aop-kesmies": func() (map[string][]adSource, error) {
		sets, err := kesmiesData()
		return map[string][]adSource{"weights.gob.gz": perTaskSets(sets)}, err
	},
	"aop-mitdys": func() (map[string][]adSource, error) {
		ds, err := mitdysData()
		return map[string][]adSource{"weights.gob.gz": mitdysSets(ds)}, err
	},
	"clinicaldata": func() (map[string][]adSource, error) {
		ds, err := clinicalData()
		if err != nil {
			return nil, err
		}
		ai, err := clinicalAIData()
		return map[string][]adSource{"weights.gob.gz": oneSet(ds), "weights-aop.gob.gz": oneSet(ds), "weights-ai.gob.gz": oneSet(ai)}, err
	},
	"multitask": func() (map[string][]adSource, error) {
		ds, err := multitaskData()
		return map[string][]adSource{"weights.gob.gz": multitaskSets(ds)}, err
	},
}

// attachModule names the training compounds of a module's committed
// bundles without retraining: it curates the module's training data as
// training does, attaches the compounds to each bundle (which fails unless
// the curated fingerprints are the AD set's, in its order) and rewrites it.
// Training attaches the same compounds, so both give the same bundle.
func attachModule(module string) error {
	plan, ok := compoundPlan[module]
	if !ok {
		return fmt.Errorf("no compound plan for module %s", module)
	}
	files, err := plan()
	if err != nil {
		return err
	}
	for file, srcs := range files {
		path := bundlePath(module, file)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b, err := ml.DecodeBundle(data)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := attachCompounds(b, srcs); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := writeFile(path, func(f fileWriter) error { return b.Encode(f) }); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		log.Printf("%s: training compounds attached", path)
	}
	return nil
}
