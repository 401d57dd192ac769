// Command gcbench is the reactor of BenchmarkCollectorSetting: sdk/chem's
// pipeline (chembench.Run: parse, descriptors, Morgan fingerprint) over the
// reference SMILES, which it reads from /data/rdkit_descriptors_tox21_3000.csv
// (the host mounts sdk/chem/testdata there).
package main

import (
	"encoding/csv"
	"os"

	"toxgate/internal/chembench"
)

var smiles []string

// load reads the SMILES column; it returns how many SMILES it read (0 on
// error, after writing the error on standard error).
//
//go:wasmexport load
func load() int32 {
	f, err := os.Open("/data/rdkit_descriptors_tox21_3000.csv")
	if err != nil {
		println("gcbench:", err.Error())
		return 0
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		println("gcbench: reading the reference file failed")
		return 0
	}
	col := -1
	for i, h := range recs[0] {
		if h == "smiles" {
			col = i
		}
	}
	if col < 0 {
		println("gcbench: no smiles column")
		return 0
	}
	smiles = smiles[:0]
	for _, r := range recs[1:] {
		smiles = append(smiles, r[col])
	}
	return int32(len(smiles))
}

// run runs the pipeline over the SMILES in batches of 500, as the chembench
// module's calls do, and returns the molecules that parsed.
//
//go:wasmexport run
func run() int32 {
	n := 0
	for i := 0; i < len(smiles); i += 500 {
		r := chembench.Run(smiles[i:min(i+500, len(smiles))], "")
		n += r.N - r.Failed
	}
	return int32(n)
}

func main() {}
