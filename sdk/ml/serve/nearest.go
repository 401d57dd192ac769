package serve

import (
	"toxgate/sdk/ml"
)

// MaxNearestCompounds bounds the nearest training compounds of a row (the
// first ones of nearest_similarities, whose length is the AD set's
// MinNeighbours).
const MaxNearestCompounds = 5

// NearestCompound is one training compound near a query: the reference
// behind one value of nearest_similarities.
type NearestCompound struct {
	// SMILES is the compound as the training data write it.
	SMILES string `json:"smiles"`
	// Similarity is its Dice similarity to the query (the value in
	// nearest_similarities at the same position).
	Similarity float64 `json:"similarity"`
	// Labels maps each task of the AD set that measured the compound to its
	// experimental class label, in task order.
	Labels Row `json:"labels"`
}

// Nearest names the references of dom, a domain found in AD set ad: at
// most MaxNearestCompounds, in the order of dom.Nearest; nil when the set
// carries no compounds.
func (s *Server) Nearest(ad int, dom ml.Domain) []NearestCompound {
	set := s.Bundle.AD[ad]
	if set.SMILES == nil || len(dom.Refs) != len(dom.Nearest) {
		return nil
	}
	n := min(len(dom.Refs), MaxNearestCompounds)
	out := make([]NearestCompound, n)
	for j := range out {
		i := dom.Refs[j]
		c := NearestCompound{SMILES: set.SMILES[i], Similarity: dom.Nearest[j], Labels: Row{}}
		for t := range s.Bundle.Tasks {
			if l, ok := s.refLabel(t, ad, i); ok {
				c.Labels.Set(s.Bundle.Tasks[t].Key, l)
			}
		}
		out[j] = c
	}
	return out
}

// refLabel is the experimental label of reference i of AD set ad for task
// t; ok is false when t does not use that set or did not measure it.
func (s *Server) refLabel(t, ad, i int) (string, bool) {
	task := &s.Bundle.Tasks[t]
	if !task.Available || task.AD != ad || task.ADLabels == nil {
		return "", false
	}
	switch task.ADLabels[i] {
	case 1:
		return task.Positive, true
	case 0:
		return task.Negative, true
	}
	return "", false
}

// appendNearest appends member key (`,"name":`) with the nearest compounds
// of dom as encoding/json encodes Nearest's answer.
func (s *Server) appendNearest(b, key []byte, ad int, dom *ml.Domain, ok *bool) []byte {
	b = append(b, key...)
	set := s.Bundle.AD[ad]
	if set.SMILES == nil || len(dom.Refs) != len(dom.Nearest) {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for j := range min(len(dom.Refs), MaxNearestCompounds) {
		if j > 0 {
			b = append(b, ',')
		}
		i := dom.Refs[j]
		b = appendString(append(b, `{"smiles":`...), set.SMILES[i])
		b = appendFloat(append(b, `,"similarity":`...), dom.Nearest[j], ok)
		b = append(b, `,"labels":{`...)
		first := true
		for t := range s.Bundle.Tasks {
			l, has := s.refLabel(t, ad, i)
			if !has {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendString(b, s.Bundle.Tasks[t].Key)
			b = appendString(append(b, ':'), l)
		}
		b = append(b, '}', '}')
	}
	return append(b, ']')
}
