package ml

import (
	"strings"
	"testing"
)

// TestEnsembleRoundTrip checks that an ensemble survives the bundle's
// encoding and predicts the mean of its members' calibrated probabilities.
func TestEnsembleRoundTrip(t *testing.T) {
	X, Y, _ := synthetic(200, 5)
	nf := DefaultFeaturizer.NumFeatures()
	spec := Spec{Kind: KindEnsemble, Seed: 3, Members: []Spec{
		{Kind: KindKNN, Trees: 5}, {Kind: KindGBT, Trees: 20, Depth: 3}, {Kind: KindLogReg, Balanced: true},
	}}
	m, err := Fit(spec, X, Y, nf)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Ensemble.Members) != 3 || len(m.Ensemble.Cal) != 3 {
		t.Fatalf("ensemble of %d members, %d calibrations", len(m.Ensemble.Members), len(m.Ensemble.Cal))
	}
	_, got, _ := roundTripBundle(t, m)
	for _, x := range X[:20] {
		var sum float64
		for i, mm := range m.Ensemble.Members {
			sum += m.Ensemble.Cal[i].Apply(mm.Predict(x, nil)[0])
		}
		mean := sum / 3
		p1, p2 := m.Predict(x, nil)[0], got.Models[0].Predict(x, nil)[0]
		if p1 != p2 || p1 != mean {
			t.Fatalf("ensemble %v, after round trip %v, mean of members %v", p1, p2, mean)
		}
	}
	if !strings.HasPrefix(spec.String(), "ensemble (mean of calibrated probabilities: k-nearest") {
		t.Errorf("spec string %q", spec.String())
	}
}

// TestEnsembleRefusesBadMembers checks the member count and kinds.
func TestEnsembleRefusesBadMembers(t *testing.T) {
	X, Y, _ := synthetic(60, 6)
	nf := DefaultFeaturizer.NumFeatures()
	many := make([]Spec, maxEnsembleMembers+1)
	for i := range many {
		many[i] = Spec{Kind: KindKNN}
	}
	for name, members := range map[string][]Spec{
		"none":   nil,
		"many":   many,
		"mlp":    {{Kind: KindMLP, Epochs: 1}},
		"nested": {{Kind: KindEnsemble, Members: []Spec{{Kind: KindKNN}}}},
	} {
		if _, err := Fit(Spec{Kind: KindEnsemble, Members: members}, X, Y, nf); err == nil {
			t.Errorf("%s: ensemble fitted", name)
		}
	}
}
