package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"toxgate/sdk/ml"
)

// readCSV reads smilesCol and the label columns of a CSV in the data folder.
// Labels "1"/"1.0"/"True" are positive, "0"/"0.0"/"False" negative, anything
// else missing. invert maps column names whose labels must be flipped.
func readCSV(file, smilesCol string, labelCols ...string) ([]ml.Record, error) {
	f, err := os.Open(filepath.Join(*dataDir, file))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", file, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimPrefix(strings.TrimSpace(h), "\ufeff")] = i
	}
	si, ok := col[smilesCol]
	if !ok {
		return nil, fmt.Errorf("%s: no column %q", file, smilesCol)
	}
	li := make([]int, len(labelCols))
	for k, c := range labelCols {
		if li[k], ok = col[c]; !ok {
			return nil, fmt.Errorf("%s: no column %q", file, c)
		}
	}
	var recs []ml.Record
	for line := 2; ; line++ {
		row, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, line, err)
		}
		rec := ml.Record{SMILES: row[si], Labels: make([]float32, len(li))}
		for k, i := range li {
			rec.Labels[k] = parseLabel(row[i])
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

func parseLabel(s string) float32 {
	switch strings.TrimSpace(s) {
	case "1", "1.0", "True", "true":
		return 1
	case "0", "0.0", "False", "false":
		return 0
	}
	return float32(math.NaN())
}

// widen places single-task records at task index t of n tasks.
func widen(recs []ml.Record, t, n int) []ml.Record {
	out := make([]ml.Record, len(recs))
	for i, r := range recs {
		y := make([]float32, n)
		for k := range y {
			y[k] = float32(math.NaN())
		}
		copy(y[t:], r.Labels)
		out[i] = ml.Record{SMILES: r.SMILES, Labels: y}
	}
	return out
}
