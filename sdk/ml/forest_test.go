package ml

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestForestRoundTrip checks that a random forest survives the bundle's
// encoding with the same probabilities, each the mean of the leaves its
// trees reach as fitted (the prediction layout changes no answer).
func TestForestRoundTrip(t *testing.T) {
	X, Y, _ := synthetic(200, 7)
	nf := DefaultFeaturizer.NumFeatures()
	m, err := Fit(Spec{Kind: KindRF, Trees: 40, Balanced: true, Seed: 3}, X, Y, nf)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.GBT.Roots) != 40 {
		t.Fatalf("%d trees, want 40", len(m.GBT.Roots))
	}
	_, got, _ := roundTripBundle(t, m)
	dense := make([]float32, nf)
	for _, x := range X {
		p1, p2 := m.Predict(x, nil)[0], got.Models[0].Predict(x, nil)[0]
		if p1 != p2 {
			t.Fatalf("forest %v, after round trip %v", p1, p2)
		}
		x.Dense(dense)
		var sum float64
		for _, r := range m.GBT.Roots {
			sum += walk(m.GBT.Nodes, r, dense)
		}
		if mean := sum / 40; p1 != mean || p1 < 0 || p1 > 1 {
			t.Fatalf("forest %v, mean of its trees' leaves %v", p1, mean)
		}
	}
}

// TestForestIsDeterministic checks that a seed fixes the forest and that
// another seed grows another one.
func TestForestIsDeterministic(t *testing.T) {
	X, Y, _ := synthetic(150, 8)
	nf := DefaultFeaturizer.NumFeatures()
	fit := func(seed int64) *GBT {
		m, err := Fit(Spec{Kind: KindRF, Trees: 15, Seed: seed}, X, Y, nf)
		if err != nil {
			t.Fatal(err)
		}
		return m.GBT
	}
	a, b, c := fit(1), fit(1), fit(2)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed grew two different forests")
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("two seeds grew the same forest")
	}
}

// TestForestBounds checks the depth limit, the smallest leaf and the cap on
// the number of trees.
func TestForestBounds(t *testing.T) {
	X, Y, _ := synthetic(120, 9)
	nf := DefaultFeaturizer.NumFeatures()
	m, err := Fit(Spec{Kind: KindRF, Trees: 10, Depth: 3, Seed: 1}, X, Y, nf)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range m.GBT.Roots {
		if d := treeDepth(m.GBT.Nodes, r); d > 3 {
			t.Fatalf("tree of depth %d, limit 3", d)
		}
	}
	// With MinLeaf 200 > the 120 rows, no tree splits.
	m, err = Fit(Spec{Kind: KindRF, Trees: 5, MinLeaf: 200, Seed: 1}, X, Y, nf)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.GBT.Nodes) != 5 {
		t.Fatalf("%d nodes in 5 trees of one leaf each", len(m.GBT.Nodes))
	}
	if n := (Spec{Kind: KindRF, Trees: maxForestTrees * 10}).forestTrees(); n != maxForestTrees {
		t.Fatalf("%d trees allowed, cap %d", n, maxForestTrees)
	}
	if d := (Spec{Kind: KindRF, Depth: maxForestDepth * 10}).forestDepth(); d != maxForestDepth {
		t.Fatalf("depth %d allowed, cap %d", d, maxForestDepth)
	}
	// A fully grown tree has at most 2·rows − 1 nodes.
	m, err = Fit(Spec{Kind: KindRF, Trees: 3, Seed: 1}, X, Y, nf)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.GBT.Nodes) > 3*(2*len(X)-1) {
		t.Fatalf("%d nodes in 3 trees of %d rows", len(m.GBT.Nodes), len(X))
	}
}

// walk returns the value of the leaf dense reaches in the tree at root r,
// following the nodes as fitted (not the prediction layout).
func walk(nodes []Node, r int32, dense []float32) float64 {
	n := nodes[r]
	for n.Left >= 0 {
		if dense[n.Feature] <= n.Thr {
			n = nodes[n.Left]
		} else {
			n = nodes[n.Right]
		}
	}
	return float64(n.Value)
}

func treeDepth(nodes []Node, r int32) int {
	type item struct {
		n int32
		d int
	}
	deepest := 0
	stack := []item{{r, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		deepest = max(deepest, it.d)
		if n := nodes[it.n]; n.Left >= 0 {
			stack = append(stack, item{n.Left, it.d + 1}, item{n.Right, it.d + 1})
		}
	}
	return deepest
}

// TestForestBalancedWeighsTheRareClass checks that class balancing weighs
// both classes alike: forests of single leaves (no split allowed) answer
// the base rate unbalanced and about one half balanced.
func TestForestBalancedWeighsTheRareClass(t *testing.T) {
	X, Y, yb := synthetic(300, 10)
	nf := DefaultFeaturizer.NumFeatures()
	var rate float64
	for _, v := range yb {
		rate += b2f64(v) / float64(len(yb))
	}
	leaf := func(balanced bool) float64 {
		m, err := Fit(Spec{Kind: KindRF, Trees: 200, MinLeaf: 1000, Balanced: balanced, Seed: 1}, X, Y, nf)
		if err != nil {
			t.Fatal(err)
		}
		return m.Predict(X[0], nil)[0]
	}
	if plain, bal := leaf(false), leaf(true); math.Abs(plain-rate) > 0.02 || math.Abs(bal-0.5) > 0.02 {
		t.Fatalf("single-leaf forests answer %.3f plain (base rate %.3f), %.3f balanced (want 0.5)", plain, rate, bal)
	}
	if s := (Spec{Kind: KindRF, Trees: 100, MinLeaf: 2, Balanced: true}).String(); !strings.HasPrefix(s, "random forest (100 trees, grown to purity, min leaf 2, √features per split, balanced true") {
		t.Errorf("spec string %q", s)
	}
}

func b2f64(b bool) float64 { return float64(b2f(b)) }
