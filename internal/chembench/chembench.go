// Package chembench is the reference workload for measuring sdk/chem: the
// pipeline parse + descriptors + Morgan (radius 2, 2048 bits) over a batch of
// SMILES, with a checksum of every result so that two runs (natively and
// inside a WebAssembly module) can be shown to compute the same thing.
package chembench

import (
	"math"

	"toxgate/sdk/chem"
)

// Result summarises one run over a batch.
type Result struct {
	N      int    `json:"n"`      // SMILES seen
	Failed int    `json:"failed"` // SMILES refused
	Bits   int    `json:"bits"`   // on-bits over all fingerprints (atoms for stage "parse")
	Sum    uint64 `json:"sum"`    // checksum of descriptors and fingerprints
}

func mix(h, v uint64) uint64 { return (h ^ v) * 0x100000001b3 }

//go:noinline
func mixCall(h, v uint64) uint64 { return (h ^ v) * 0x100000001b3 }

// Run runs the pipeline over smiles up to stage: "parse" (parse only),
// "describe" (parse and descriptors) or anything else (the whole pipeline).
// Two more stages measure the floor of the module's slowdown, with no
// sdk/chem code: "loop" hashes each SMILES' bytes 64 times in a plain loop
// (integer arithmetic and byte loads, no calls), "calls" does the same through
// a function that is not inlined (one call per byte).
func Run(smiles []string, stage string) Result {
	var o Result
	if stage == "loop" || stage == "calls" {
		for _, s := range smiles {
			o.N++
			o.Bits += len(s)
			h := o.Sum
			for range 64 {
				if stage == "calls" {
					for i := 0; i < len(s); i++ {
						h = mixCall(h, uint64(s[i]))
					}
				} else {
					for i := 0; i < len(s); i++ {
						h = mix(h, uint64(s[i]))
					}
				}
			}
			o.Sum = h
		}
		return o
	}
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
		var fp *chem.BitVec
		if stage == "describe" {
			fp = chem.NewBitVec(2048) // an empty one: the same checksum steps
		} else {
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
