// Command chembench is a test module for BenchmarkChemPipeline: its one route
// runs the sdk/chem pipeline (ParseSMILES, Describe, Morgan radius 2 / 2048
// bits) over a batch of SMILES, so that the cost of a call is spread over many
// molecules. It answers counts and a checksum that the benchmark compares with
// the same pipeline run natively. Not served by default.
package main

import (
	"math"

	"toxgate/sdk/abi"
	"toxgate/sdk/chem"
	"toxgate/sdk/module"
)

type in struct {
	SMILES []string `json:"smiles" desc:"molecules to process"`
	// Stage stops the pipeline early: "parse" (ParseSMILES only), "describe"
	// (no fingerprint); empty runs all of it.
	Stage string `json:"stage,omitempty" enum:"parse|describe"`
}

type out struct {
	N      int    `json:"n"`      // molecules processed
	Failed int    `json:"failed"` // SMILES refused
	Bits   int    `json:"bits"`   // on-bits over all fingerprints
	Sum    uint64 `json:"sum"`    // checksum of descriptors and fingerprints
}

// The pipeline below is the same as pipeline in ../../chembench_test.go.

func mix(h, v uint64) uint64 { return (h ^ v) * 0x100000001b3 }

func pipeline(smiles []string, stage string) out {
	var o out
	for _, s := range smiles {
		o.N++
		m, err := chem.ParseSMILES(s)
		if err != nil {
			o.Failed++
			continue
		}
		if stage == "parse" {
			o.Bits += m.NumAtoms()
			continue
		}
		d := chem.Describe(m)
		fp := chem.NewBitVec(2048)
		if stage != "describe" {
			fp = chem.Morgan(m, 2, 2048)
		}
		o.Bits += fp.Count()
		h := o.Sum
		for _, c := range []byte(d.Formula) {
			h = mix(h, uint64(c))
		}
		for _, v := range []int{d.HeavyAtoms, d.FormalCharge, d.HBD, d.HBA, d.NHOHCount, d.NOCount,
			d.RotatableBonds, d.RingCount, d.AromaticRings, d.NumAtomsWithHs} {
			h = mix(h, uint64(v))
		}
		for _, f := range []float64{d.MolWt, d.ExactMass, d.TPSA, d.CLogP, d.MR, d.FractionCSP3} {
			h = mix(h, math.Float64bits(f))
		}
		for _, w := range fp.Words() {
			h = mix(h, w)
		}
		o.Sum = h
	}
	return o
}

func init() {
	module.Register(module.Info{
		Name: "chembench", Version: "1.0.0",
		Description: "Runs the sdk/chem pipeline over a batch of SMILES (benchmark module).",
		Limits:      abi.Limits{MemoryPages: 1024, TimeoutMS: 60000, MaxInputBytes: 4 << 20},
		Card:        abi.ModelCard{Summary: "Parse, all descriptors and Morgan r2/2048 per SMILES; answers a checksum."},
	},
		module.Handle("/chembench/pipeline", func(i in) (out, error) { return pipeline(i.SMILES, i.Stage), nil }).
			Output("n: molecules; failed: SMILES refused; bits: on-bits in all fingerprints; sum: checksum"),
	)
}

func main() {}
