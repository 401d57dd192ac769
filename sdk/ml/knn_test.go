package ml

import (
	"math/bits"
	"math/rand"
	"testing"
)

// scanPredict is the kNN prediction by a full scan of the fingerprint
// words, the reference the inverted index must reproduce exactly.
func scanPredict(k *KNN, x Sparse) float64 {
	q := knnBits(x, k.Bits)
	nq := popcount(q)
	w := len(q)
	type nb struct {
		s float64
		y float32
	}
	var top []nb
	for i := range k.Pop {
		and := 0
		for j, v := range k.FP[i*w : (i+1)*w] {
			and += bits.OnesCount64(v & q[j])
		}
		u := nq + int(k.Pop[i]) - and
		s := 0.0
		if u > 0 {
			s = float64(and) / float64(u)
		}
		if len(top) == k.K && s <= top[k.K-1].s {
			continue
		}
		j := len(top)
		top = append(top, nb{})
		for j > 0 && top[j-1].s < s {
			top[j] = top[j-1]
			j--
		}
		top[j] = nb{s, k.Y[i]}
		if len(top) > k.K {
			top = top[:k.K]
		}
	}
	num, den := float64(k.Base), 1.0
	for _, n := range top {
		num += n.s * float64(n.y)
		den += n.s
	}
	return num / den
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
