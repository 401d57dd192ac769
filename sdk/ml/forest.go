package ml

import (
	"fmt"
	"math"
	"math/rand"
	"sync"
)

// Forest is a random forest: classification trees grown on bootstrap
// samples of the rows with a random subset of the features tried at each
// split. Trees are stored flat as in GBT; a leaf's Value is the (class-
// weighted) fraction of positives of its bootstrap rows, and the forest's
// probability is the mean of the leaves the rows reach.
type Forest struct {
	Roots []int32
	Nodes []Node

	once sync.Once
	flat []flatNode // the trees laid out for prediction (layout)
	ends []int32    // flat[ends[t-1]:ends[t]] is tree t
}

// flatNode is a node laid out for prediction in 12 bytes: an inner node
// sends x[Feature] ≤ Thr to Left and the others to Left+1; a leaf
// (Feature < 0) holds its value in Thr.
type flatNode struct {
	Thr     float32
	Feature int32
	Left    int32
}

// Bounds of a forest, whatever its Spec asks: the trees, and the depth of
// a tree (a tree has at most 2·rows − 1 nodes, so a forest holds at most
// maxForestTrees·(2·rows − 1) nodes).
const (
	maxForestTrees = 2000
	maxForestDepth = 40
)

func (s Spec) forestTrees() int { return min(orI(s.Trees, 500), maxForestTrees) }

// forestDepth is the depth limit of a forest's trees (Depth, or fully
// grown: maxForestDepth).
func (s Spec) forestDepth() int {
	if s.Depth <= 0 || s.Depth > maxForestDepth {
		return maxForestDepth
	}
	return s.Depth
}

func (s Spec) minLeaf() int { return max(s.MinLeaf, 1) }

// forestFeatures is the number of features tried per split among those
// that vary in the node: ColSample of them, or √(features) by default.
func (s Spec) forestFeatures(nf int) int {
	if s.ColSample > 0 && s.ColSample <= 1 {
		return max(1, int(math.Round(s.ColSample*float64(nf))))
	}
	return max(1, int(math.Round(math.Sqrt(float64(nf)))))
}

func (s Spec) forestString() string {
	depth := "grown to purity"
	if s.Depth > 0 {
		depth = fmt.Sprintf("depth ≤ %d", s.forestDepth())
	}
	feats := "√features"
	if s.ColSample > 0 && s.ColSample <= 1 {
		feats = fmt.Sprintf("%g of the features", s.ColSample)
	}
	return fmt.Sprintf("random forest (%d trees, %s, min leaf %d, %s per split, balanced %v)",
		s.forestTrees(), depth, s.minLeaf(), feats, s.Balanced)
}

// layout copies the trees into flat, each tree breadth-first with the two
// children of a node side by side: the levels every prediction visits
// share cache lines, and a node takes 12 bytes instead of 20.
func (f *Forest) layout() {
	f.flat = make([]flatNode, 0, len(f.Nodes))
	var queue []int32
	var at []int32 // at[k]: flat index of queue[k]
	for _, r := range f.Roots {
		base := int32(len(f.flat))
		queue, at = append(queue[:0], r), append(at[:0], base)
		f.flat = append(f.flat, flatNode{})
		for k := 0; k < len(queue); k++ {
			n := f.Nodes[queue[k]]
			if n.Left < 0 {
				f.flat[at[k]] = flatNode{Thr: n.Value, Feature: -1}
				continue
			}
			l := int32(len(f.flat))
			f.flat = append(f.flat, flatNode{}, flatNode{})
			f.flat[at[k]] = flatNode{Thr: n.Thr, Feature: n.Feature, Left: l}
			queue, at = append(queue, n.Left, n.Right), append(at, l, l+1)
		}
		f.ends = append(f.ends, int32(len(f.flat)))
	}
}

// forestLanes is how many trees predict walks at once: their node loads
// are independent, so the processor overlaps their cache misses.
const forestLanes = 8

// predict is the mean over the trees of the leaf dense reaches. The trees
// are walked forestLanes at a time, in lockstep, and their leaves summed in
// tree order.
func (f *Forest) predict(dense []float32) float64 {
	if len(f.Roots) == 0 {
		return 0.5
	}
	f.once.Do(f.layout)
	var sum float64
	var cur [forestLanes]int32
	for g := 0; g < len(f.ends); g += forestLanes {
		m := min(forestLanes, len(f.ends)-g)
		for k := 0; k < m; k++ {
			if t := g + k; t > 0 {
				cur[k] = f.ends[t-1]
			} else {
				cur[k] = 0
			}
		}
		for moved := true; moved; {
			moved = false
			for k := 0; k < m; k++ {
				n := &f.flat[cur[k]]
				if n.Feature >= 0 {
					next := n.Left
					if dense[n.Feature] > n.Thr {
						next++
					}
					cur[k], moved = next, true
				}
			}
		}
		for k := 0; k < m; k++ {
			sum += float64(f.flat[cur[k]].Thr)
		}
	}
	return sum / float64(len(f.Roots))
}

// forestGrower holds the scratch space of growing one forest's trees.
type forestGrower struct {
	bd      *binned
	y, w    []float32
	mtry    int
	minLeaf float64
	depth   int
	// Per node: hist holds (weight, positive weight, draws) per feature and
	// bin for the touched features; stamp marks the features touched by
	// the node's rows (stamp[f] == gen).
	hist    []float64
	stamp   []uint32
	gen     uint32
	touched []int32
	varying []int32
}

// fitForest grows spec's trees on bootstrap samples of (X, y) weighted by w.
func fitForest(spec Spec, X []Sparse, y, w []float32, nf int) *Forest {
	g := &forestGrower{
		bd: binData(X, nf), y: y, w: w,
		mtry: spec.forestFeatures(nf), minLeaf: float64(spec.minLeaf()), depth: spec.forestDepth(),
		hist: make([]float64, nf*maxBins*3), stamp: make([]uint32, nf),
	}
	f := &Forest{}
	n := len(X)
	draws := make([]float64, n)
	r := rand.New(rand.NewSource(spec.Seed + 17))
	for t := 0; t < spec.forestTrees(); t++ {
		clear(draws)
		for i := 0; i < n; i++ {
			draws[r.Intn(n)]++
		}
		var rows []int32
		for i, d := range draws {
			if d > 0 {
				rows = append(rows, int32(i))
			}
		}
		f.Roots = append(f.Roots, g.grow(f, rows, draws, r))
	}
	return f
}

// grow grows one tree on rows (each drawn draws[i] times) into f and
// returns its root. The nodes are grown from an explicit stack.
func (g *forestGrower) grow(f *Forest, rows []int32, draws []float64, r *rand.Rand) int32 {
	type job struct {
		node  int32
		rows  []int32
		depth int
	}
	root := int32(len(f.Nodes))
	f.Nodes = append(f.Nodes, Node{Left: -1, Right: -1})
	stack := []job{{root, rows, 0}}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var W, P, D float64
		for _, i := range j.rows {
			wi := float64(g.w[i]) * draws[i]
			W += wi
			P += wi * float64(g.y[i])
			D += draws[i]
		}
		f.Nodes[j.node].Value = float32(P / math.Max(W, 1e-12))
		if j.depth >= g.depth || D < 2*g.minLeaf || P <= 0 || P >= W {
			continue
		}
		feat, bin, ok := g.bestSplit(j.rows, draws, W, P, D, r)
		if !ok {
			continue
		}
		var left, right []int32
		for _, i := range j.rows {
			if g.bd.rowBin(i, feat) <= bin {
				left = append(left, i)
			} else {
				right = append(right, i)
			}
		}
		l := int32(len(f.Nodes))
		f.Nodes = append(f.Nodes, Node{Left: -1, Right: -1}, Node{Left: -1, Right: -1})
		v := f.Nodes[j.node].Value
		f.Nodes[j.node] = Node{Feature: feat, Thr: g.bd.edges[feat][bin], Left: l, Right: l + 1, Value: v}
		stack = append(stack, job{l + 1, right, j.depth + 1}, job{l, left, j.depth + 1})
	}
	return root
}

// bestSplit histograms the node's rows over the features they touch, draws
// mtry of the features that vary in the node (uniformly, without
// replacement) and returns the split with the largest decrease of the
// weighted Gini impurity that leaves at least minLeaf draws on each side.
func (g *forestGrower) bestSplit(rows []int32, draws []float64, W, P, D float64, r *rand.Rand) (int32, uint8, bool) {
	g.gen++
	if g.gen == 0 { // wrapped: reset the stamps
		clear(g.stamp)
		g.gen = 1
	}
	g.touched = g.touched[:0]
	bd := g.bd
	for _, i := range rows {
		wi := float64(g.w[i]) * draws[i]
		pi := wi * float64(g.y[i])
		for k := bd.rowPtr[i]; k < bd.rowPtr[i+1]; k++ {
			f := bd.feat[k]
			h := g.hist[int(f)*maxBins*3 : (int(f)+1)*maxBins*3]
			if g.stamp[f] != g.gen {
				g.stamp[f] = g.gen
				g.touched = append(g.touched, f)
				clear(h)
			}
			o := int(bd.bin[k]) * 3
			h[o] += wi
			h[o+1] += pi
			h[o+2] += draws[i]
		}
	}
	// Rows without a feature hold 0: add them to its zero bin, and keep the
	// features whose rows fall in more than one bin.
	g.varying = g.varying[:0]
	for _, f := range g.touched {
		h := g.hist[int(f)*maxBins*3 : (int(f)+1)*maxBins*3]
		nb := len(bd.edges[f])
		var sw, sp, sd float64
		for b := 0; b < nb; b++ {
			sw, sp, sd = sw+h[3*b], sp+h[3*b+1], sd+h[3*b+2]
		}
		z := int(bd.zero[f])
		h[3*z] += W - sw
		h[3*z+1] += P - sp
		h[3*z+2] += D - sd
		used := 0
		for b := 0; b < nb && used < 2; b++ {
			if h[3*b+2] > 0 {
				used++
			}
		}
		if used > 1 {
			g.varying = append(g.varying, f)
		}
	}
	m := min(g.mtry, len(g.varying))
	parent := P * (W - P) / W
	bestGain, bestF, bestB := 1e-12, int32(-1), uint8(0)
	for c := 0; c < m; c++ {
		k := c + r.Intn(len(g.varying)-c)
		g.varying[c], g.varying[k] = g.varying[k], g.varying[c]
		f := g.varying[c]
		h := g.hist[int(f)*maxBins*3 : (int(f)+1)*maxBins*3]
		var wl, pl, dl float64
		for b := 0; b < len(bd.edges[f])-1; b++ {
			wl, pl, dl = wl+h[3*b], pl+h[3*b+1], dl+h[3*b+2]
			if dl < g.minLeaf {
				continue
			}
			if D-dl < g.minLeaf {
				break
			}
			wr, pr := W-wl, P-pl
			if wl <= 0 || wr <= 0 {
				continue
			}
			// Gini impurity times weight: 2·p·(1−p)·W = 2·P·(W−P)/W.
			gain := parent - pl*(wl-pl)/wl - pr*(wr-pr)/wr
			if gain > bestGain {
				bestGain, bestF, bestB = gain, f, uint8(b)
			}
		}
	}
	return bestF, bestB, bestF >= 0
}
