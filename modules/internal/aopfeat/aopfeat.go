// Package aopfeat computes the adverse-outcome-pathway features of the
// /clinicaldata/aop model: the probabilities that the AOP models give for the
// molecular initiating event (MIE), key events 1 and 2 (KE1, KE2) and apical
// cardiotoxicity, appended after the structure features. Training and serving
// use this same code.
package aopfeat

import (
	"fmt"

	"toxgate/sdk/ml"
)

// Names are the appended features, in order: task keys of the source bundles.
var Names = []string{"MIE", "KE1", "KE2", "apical"}

// Source locates each AOP probability in the bundles.
type Source struct {
	bundles []*ml.Bundle
	model   []int
	output  []int
	bundle  []int
}

// New finds the tasks named by Names in the bundles (aop-kesmies and dictrank).
func New(bundles ...*ml.Bundle) (*Source, error) {
	s := &Source{bundles: bundles}
	for _, name := range Names {
		found := false
		for bi, b := range bundles {
			for _, t := range b.Tasks {
				if t.Key == name && t.Available {
					s.bundle, s.model, s.output = append(s.bundle, bi), append(s.model, t.Model), append(s.output, t.Output)
					found = true
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("aopfeat: no bundle has task %q", name)
		}
	}
	return s, nil
}

// Extend returns the structure features x (of nf features) followed by the
// AOP probabilities at indices nf, nf+1, ...
func (s *Source) Extend(x ml.Sparse, nf int, dense []float32) ml.Sparse {
	out := ml.Sparse{Idx: append([]int32(nil), x.Idx...), Val: append([]float32(nil), x.Val...)}
	for k := range Names {
		p := s.bundles[s.bundle[k]].Models[s.model[k]].Predict(x, dense)[s.output[k]]
		out.Idx = append(out.Idx, int32(nf+k))
		out.Val = append(out.Val, float32(p))
	}
	return out
}
