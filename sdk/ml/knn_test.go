package ml

import (
	"math/bits"
	"math/rand"
	"testing"
)

// scanPredict is the kNN prediction with the shared bits counted by a full
// scan of the fingerprint words, the reference the inverted index must
// reproduce exactly.
func scanPredict(k *KNN, x Sparse) float64 {
	q := knnBits(x, k.Bits)
	nq := popcount(q)
	w := len(q)
	return k.vote(func(i int) float64 {
		and := 0
		for j, v := range k.FP[i*w : (i+1)*w] {
			and += bits.OnesCount64(v & q[j])
		}
		if u := nq + int(k.Pop[i]) - and; u > 0 {
			return float64(and) / float64(u)
		}
		return 0
	})
}

// TestKNNIndexMatchesScan checks that the inverted-index kNN gives the
// full scan's probabilities bit for bit, ties and empty queries included.
func TestKNNIndexMatchesScan(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	nf := DefaultFeaturizer.NumFeatures()
	randX := func(nbits int) Sparse {
		var x Sparse
		for i := 0; i < DefaultFeaturizer.Bits; i += 1 + r.Intn(2*DefaultFeaturizer.Bits/max(nbits, 1)) {
			x.Idx, x.Val = append(x.Idx, int32(i)), append(x.Val, 1)
		}
		x.Idx, x.Val = append(x.Idx, int32(nf-1)), append(x.Val, 3) // a descriptor, not a bit
		return x
	}
	var X []Sparse
	var y []float32
	for i := 0; i < 300; i++ {
		x := randX(5 + r.Intn(60))
		if i%50 == 0 && i > 0 {
			x = X[i-1] // duplicates make ties
		}
		X, y = append(X, x), append(y, float32(r.Intn(2)))
	}
	X = append(X, Sparse{}) // a structure without bits
	y = append(y, 1)
	for _, k := range []int{1, 5, 7} {
		m := fitKNN(Spec{Trees: k}, X, y, DefaultFeaturizer.Bits)
		queries := append([]Sparse{{}, X[0], X[50]}, randX(3), randX(40), randX(200))
		for qi, q := range queries {
			if got, want := m.predict(q), scanPredict(m, q); got != want {
				t.Errorf("k %d query %d: index %v, scan %v", k, qi, got, want)
			}
		}
	}
}
