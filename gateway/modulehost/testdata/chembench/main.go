// Command chembench is a test module for BenchmarkChemPipeline: its one route
// runs the sdk/chem pipeline (ParseSMILES, Describe, Morgan radius 2 / 2048
// bits) over a batch of SMILES, so that the cost of a call is spread over many
// molecules. It answers counts and a checksum that the benchmark compares with
// the same pipeline run natively. Not served by default.
package main

import (
	"toxgate/internal/chembench"
	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

type in struct {
	SMILES []string `json:"smiles" desc:"molecules to process"`
	// Stage stops the pipeline early: "parse" (ParseSMILES only), "describe"
	// (no fingerprint); empty runs all of it. "loop" and "calls" run no
	// sdk/chem code: the floor of the slowdown (see chembench.Run).
	Stage string `json:"stage,omitempty" enum:"parse|describe|loop|calls"`
}

func init() {
	module.Register(module.Info{
		Name: "chembench", Version: "1.0.0",
		Description: "Runs the sdk/chem pipeline over a batch of SMILES (benchmark module).",
		Limits:      abi.Limits{MemoryPages: 1024, TimeoutMS: 60000, MaxInputBytes: 4 << 20},
		Card:        abi.ModelCard{Summary: "Parse, all descriptors and Morgan r2/2048 per SMILES; answers a checksum."},
	},
		module.Handle("/chembench/pipeline", func(i in) (chembench.Result, error) { return chembench.Run(i.SMILES, i.Stage), nil }).
			Output("n: molecules; failed: SMILES refused; bits: on-bits in all fingerprints; sum: checksum"),
	)
}

func main() {}
