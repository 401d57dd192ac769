package ml

import (
	"math"

	"toxgate/sdk/chem"
)

// Sparse is a sparse feature vector with ascending indices.
type Sparse struct {
	Idx []int32
	Val []float32
}

// Featurizer turns a molecule into the model's feature vector: folded Morgan
// environment counts (as log2(1+count)) followed by physico-chemical
// descriptors. Training and serving call the same Features method.
type Featurizer struct {
	// Radius of the Morgan environments (2 = ECFP4).
	Radius int
	// Bits is the folded length of the Morgan part.
	Bits int
}

// DefaultFeaturizer is Morgan radius 2 folded to 2048 counts plus descriptors.
var DefaultFeaturizer = Featurizer{Radius: 2, Bits: 2048}

// DescriptorNames names the descriptor features, in order, after the Morgan part.
var DescriptorNames = []string{
	"mol_wt", "heavy_atoms", "formal_charge", "hbd", "hba", "nhoh", "no_count",
	"rotatable_bonds", "rings", "aromatic_rings", "tpsa", "clogp", "mr",
	"fraction_csp3", "n_N", "n_O", "n_S", "n_P", "n_F", "n_Cl", "n_Br", "n_I",
	"n_pos_charged", "n_neg_charged", "n_aromatic_atoms", "n_ring_atoms",
}

// NumFeatures is the length of the feature vector.
func (f Featurizer) NumFeatures() int { return f.Bits + len(DescriptorNames) }

// FeatureName names feature i ("morgan_17", "clogp").
func (f Featurizer) FeatureName(i int) string {
	if i < f.Bits {
		return "morgan_" + itoa(i)
	}
	return DescriptorNames[i-f.Bits]
}

// Features computes the feature vector of m.
func (f Featurizer) Features(m *chem.Mol) Sparse {
	return f.fromCounts(m, chem.MorganCounts(m, f.Radius, f.Bits))
}

// FeaturesAndAD returns f.Features(m) and ADFingerprint(m), identical to the
// two calls, with one Morgan pass for both.
func (f Featurizer) FeaturesAndAD(m *chem.Mol) (Sparse, []uint64) {
	cv, fp := chem.MorganCountsAndBits(m, f.Radius, f.Bits, adRadius, adBits)
	return f.fromCounts(m, cv), fp.Words()
}

// log2p1[c] is float32(math.Log2(1+c)), the feature value of a count c.
var log2p1 = func() (t [64]float32) {
	for c := range t {
		t[c] = float32(math.Log2(1 + float64(c)))
	}
	return t
}()

// fromCounts builds the feature vector from m's Morgan counts.
func (f Featurizer) fromCounts(m *chem.Mol, cv *chem.CountVec) Sparse {
	n := len(cv.Idx)
	x := Sparse{Idx: make([]int32, n, n+len(DescriptorNames)), Val: make([]float32, n, n+len(DescriptorNames))}
	for k, i := range cv.Idx {
		x.Idx[k] = int32(i)
		if c := cv.Counts[k]; c < uint32(len(log2p1)) {
			x.Val[k] = log2p1[c]
		} else {
			x.Val[k] = float32(math.Log2(1 + float64(c)))
		}
	}
	for k, v := range Descriptors(m) {
		x.Idx = append(x.Idx, int32(f.Bits+k))
		x.Val = append(x.Val, float32(v))
	}
	return x
}

// Descriptors returns the values named by DescriptorNames.
func Descriptors(m *chem.Mol) []float64 {
	d := chem.Describe(m)
	var el [10]float64 // N O S P F Cl Br I pos neg
	arom, ring := 0.0, 0.0
	for i := 0; i < m.NumAtoms(); i++ {
		switch m.AtomicNum(i) {
		case 7:
			el[0]++
		case 8:
			el[1]++
		case 16:
			el[2]++
		case 15:
			el[3]++
		case 9:
			el[4]++
		case 17:
			el[5]++
		case 35:
			el[6]++
		case 53:
			el[7]++
		}
		if c := m.AtomCharge(i); c > 0 {
			el[8]++
		} else if c < 0 {
			el[9]++
		}
		if m.AtomAromatic(i) {
			arom++
		}
		if m.IsAtomInRing(i) {
			ring++
		}
	}
	return []float64{
		d.MolWt, float64(d.HeavyAtoms), float64(d.FormalCharge), float64(d.HBD), float64(d.HBA),
		float64(d.NHOHCount), float64(d.NOCount), float64(d.RotatableBonds), float64(d.RingCount),
		float64(d.AromaticRings), d.TPSA, d.CLogP, d.MR, d.FractionCSP3,
		el[0], el[1], el[2], el[3], el[4], el[5], el[6], el[7], el[8], el[9], arom, ring,
	}
}

// The applicability-domain fingerprint: Morgan radius and folded length.
const adRadius, adBits = 3, 1024

// ADFingerprint returns the applicability-domain fingerprint of m: Morgan
// radius 3 folded to 1024 bits, as packed words.
func ADFingerprint(m *chem.Mol) []uint64 {
	w := chem.Morgan(m, adRadius, adBits).Words()
	return append([]uint64(nil), w...)
}

// Dense writes x into dst (length ≥ the feature count), zeroing it first.
func (x Sparse) Dense(dst []float32) {
	clear(dst)
	for k, i := range x.Idx {
		dst[i] = x.Val[k]
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	p := len(b)
	for i > 0 {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
	}
	return string(b[p:])
}
