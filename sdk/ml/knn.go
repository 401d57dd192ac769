package ml

import (
	"math/bits"
	"sync"
)

// KNN is a k-nearest-neighbour classifier on the Morgan part of the features
// (bits of the folded environments), with Tanimoto similarity: the probability
// is the similarity-weighted share of positives among the K nearest training
// structures, shrunk towards the base rate by one pseudo-neighbour.
type KNN struct {
	K, Bits int
	FP      []uint64 // Bits/64 words per training structure
	Pop     []uint16
	Y       []float32
	Base    float32

	// postings[b] are the training structures with bit b, built from FP
	// on the first prediction (not encoded).
	once     sync.Once
	postings [][]int32
}

func knnBits(x Sparse, nbits int) []uint64 {
	w := make([]uint64, (nbits+63)/64)
	for _, i := range x.Idx {
		if int(i) < nbits {
			w[i/64] |= 1 << (uint(i) % 64)
		}
	}
	return w
}

func fitKNN(spec Spec, X []Sparse, y []float32, nbits int) *KNN {
	k := &KNN{K: orI(spec.Trees, 7), Bits: nbits}
	var pos float64
	for i, x := range X {
		fp := knnBits(x, nbits)
		k.FP = append(k.FP, fp...)
		k.Pop = append(k.Pop, uint16(popcount(fp)))
		k.Y = append(k.Y, y[i])
		pos += float64(y[i])
	}
	k.Base = float32(pos / float64(max(len(X), 1)))
	return k
}

// index builds the inverted index of the training fingerprints: for each
// bit, the training structures that have it, in ascending order.
func (k *KNN) index() {
	w := (k.Bits + 63) / 64
	k.postings = make([][]int32, k.Bits)
	for i := range k.Pop {
		for j, v := range k.FP[i*w : (i+1)*w] {
			for v != 0 {
				b := j*64 + bits.TrailingZeros64(v)
				k.postings[b] = append(k.postings[b], int32(i))
				v &= v - 1
			}
		}
	}
}

// predict counts the bits each training structure shares with the query
// through the inverted index (a query has a few dozen of the 2048 bits, so
// this touches a small share of the fingerprint words a full scan reads),
// then keeps the K most similar structures in training order.
func (k *KNN) predict(x Sparse) float64 {
	k.once.Do(k.index)
	shared := make([]int32, len(k.Pop))
	nq := 0
	for _, i := range x.Idx {
		if int(i) < k.Bits {
			nq++
			for _, r := range k.postings[i] {
				shared[r]++
			}
		}
	}
	return k.vote(func(i int) float64 {
		and := int(shared[i])
		if u := nq + int(k.Pop[i]) - and; u > 0 {
			return float64(and) / float64(u)
		}
		return 0
	})
}

// vote keeps the K training structures most similar by sim (in training
// order among equals) and answers their similarity-weighted label mean,
// with Base as a prior of weight one.
func (k *KNN) vote(sim func(i int) float64) float64 {
	type nb struct {
		s float64
		y float32
	}
	top := make([]nb, 0, k.K+1)
	for i := range k.Pop {
		s := sim(i)
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
